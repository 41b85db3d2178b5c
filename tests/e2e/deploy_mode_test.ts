/**
 * The Deploy shape end to end: `deno task start:deploy`'s launcher runs the server without FFI and with write access to
 * its store file alone, on the wasm backend, and its rankings equal those of a native server.
 */
import assert from "node:assert/strict";
import { dirname, relative } from "node:path";
import { deployModeFlags } from "../../start_deploy.ts";
import { startTestServer } from "../_helpers.ts";
import { serverEnvironment, startServerProcess } from "../_server_process.ts";

/** The command of `deno task start:deploy`. */
const LAUNCHER = [
  "run",
  "--allow-env",
  "--allow-read",
  "--allow-write",
  "--allow-run",
  new URL("../../start_deploy.ts", import.meta.url).pathname,
];

const DOCS = [
  "the cat and the dog",
  "a bird on the house",
  "red green blue yellow",
  "apple banana cherry grape",
  "search index document text",
  "vector model embed query",
  "car bus train plane ship",
  "the horse in the city",
  "bread cheese milk rice soup",
  "project key service store database",
].map((text, i) => ({ id: `d${i}`, text, metadata: { even: i % 2 === 0 } }));

const QUERIES = ["cat dog", "fruit apple", "train to the city", "database store"];

async function filesUnder(dir: string, root = dir): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    found.push(relative(root, path));
    if (entry.isDirectory) found.push(...await filesUnder(path, root));
  }
  return found.sort();
}

Deno.test("the server gets write access to the store file alone, or none for the platform's store", () => {
  const base = ["--no-prompt", "--deny-ffi", "--allow-net", "--allow-env", "--allow-read"];
  assert.deepEqual(deployModeFlags("/srv/quire/quire.kv"), [...base, "--allow-write=/srv/quire/quire.kv"]);
  assert.deepEqual(deployModeFlags(undefined), base);
  assert.deepEqual(deployModeFlags("https://api.deno.com/databases/x/connect"), base);
});

Deno.test("in Deploy shape the server writes only its store, needs no FFI, and ranks as the native server", async () => {
  const env = await serverEnvironment();
  const dir = dirname(dirname(env.DENO_KV_PATH!));
  env.MODEL_CACHE_DIR = `${dir}/model-cache`;
  const deploy = await startServerProcess(env, "", { args: LAUNCHER });
  {
    await using native = await startTestServer();
    try {
      for (const server of [deploy, native]) {
        const response = await server.call({ action: "createIndex", indexName: "faq", docs: DOCS });
        assert.equal(response.status, 200, await response.text());
      }
      for (const query of QUERIES) {
        for (const mode of ["vector", "hybrid"]) {
          for (const filter of [undefined, { even: true }]) {
            const body = { action: "search", indexName: "faq", query, mode, filter, include: ["score"] };
            const [wasm, expected] = await Promise.all([deploy, native].map(async (server) => {
              const response = await server.call(body);
              assert.equal(response.status, 200);
              return (await response.json()).hits as { id: string; score: number }[];
            }));
            const what = `${mode} "${query}"${filter ? " filtered" : ""}`;
            assert.deepEqual(wasm!.map((hit) => hit.id), expected!.map((hit) => hit.id), what);
            wasm!.forEach((hit, i) => assert.ok(Math.abs(hit.score - expected![i]!.score) < 1e-3, what));
          }
        }
      }
      const page = await fetch(new URL("/ui", deploy.url));
      assert.equal(page.status, 200, "the dashboard is served in Deploy shape too");
      assert.match(await page.text(), /<title>quire<\/title>/);
    } finally {
      assert.equal(await deploy.stop(), 0);
    }
  }
  assert.deepEqual(await filesUnder(dir), ["data", "data/quire.kv", "models.json"]);
});
