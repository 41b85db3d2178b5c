/**
 * Writes a store fixture with the code of another checkout, for `tests/e2e/upgrade_test.ts`: a store that an earlier
 * release wrote, which today's code must open and serve as it was. The store holds two projects, a scoped key and a
 * registered public key, an index of long texts (passages) with metadata, and one of client vectors. Next to it,
 * `fixture.json` holds the keys and what that release answered: every document and a set of searches.
 *
 *   git worktree add ../before <commit>
 *   deno run -A tools/make_store_fixture.ts --root ../before --commit <commit> --out tests/fixtures/store-<commit>
 */
import { dirname } from "node:path";
import { parseArgs } from "node:util";
import { ok, PERMISSIONS, serverEnvironment, startServerProcess } from "../tests/_server_process.ts";
import { testModels } from "../tests/_helpers.ts";

const WORDS = ["river", "lantern", "forest", "harbor", "meadow", "canyon", "glacier", "orchard", "valley", "summit"];
const sentence = (i: number) => Array.from({ length: 9 }, (_, k) => WORDS[(i * 3 + k * 7) % 10]).join(" ") + ".";

/** The documents of the fixture, by index; the long texts split into several passages. */
export function fixtureDocs(): Record<string, Record<string, unknown>[]> {
  return {
    docs: Array.from({ length: 24 }, (_, i) => ({
      id: `doc-${i}`,
      text: Array.from({ length: i % 6 === 0 ? 60 : 2 }, (_, s) => sentence(i + s)).join(" "),
      metadata: { tenant: i % 2 === 0 ? "a" : "b", rank: i },
    })),
    vectors: Array.from({ length: 16 }, (_, i) => ({
      id: `vec-${i}`,
      text: sentence(i),
      vector: Array.from({ length: 8 }, (_, d) => Math.sin(i * 1.7 + d * 0.9)),
    })),
    notes: Array.from({ length: 5 }, (_, i) => ({ id: `note-${i}`, text: sentence(i * 5) })),
  };
}

/** The searches whose answers the fixture keeps. */
export const FIXTURE_SEARCHES: Record<string, unknown>[] = [
  { indexName: "docs", query: "lantern by the river", mode: "fulltext", include: ["score", "passage"] },
  { indexName: "docs", query: "glacier meadow", mode: "vector", filter: { tenant: "a" } },
  { indexName: "docs", query: "harbor orchard summit", mode: "hybrid", facets: ["tenant"] },
  { indexName: "vectors", query: "", mode: "vector", vector: [0.1, 0.9, -0.3, 0.4, 0, 0.2, -0.7, 0.5] },
  { indexName: "vectors", query: "canyon", mode: "fulltext" },
];

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: { root: { type: "string" }, commit: { type: "string" }, out: { type: "string" } },
  });
  if (values.root === undefined || values.commit === undefined || values.out === undefined) {
    console.error("Usage: make_store_fixture.ts --root <checkout> --commit <hash> --out <dir>");
    Deno.exit(2);
  }
  const out = values.out;
  await Deno.mkdir(out, { recursive: true });
  const env = await serverEnvironment();
  await Deno.writeTextFile(
    env.MODELS_FILE!,
    JSON.stringify({ ...await testModels(), "client-8": { version: "1", dimensions: 8 } }),
  );
  const args = ["run", ...PERMISSIONS, `${values.root}/main.ts`];
  const server = await startServerProcess(env, "", { args });
  const docs = fixtureDocs();
  await ok(server, { action: "createIndex", indexName: "docs", docs: docs.docs });
  await ok(server, { action: "createIndex", indexName: "vectors", modelId: "client-8", docs: docs.vectors });
  const scoped = await ok<{ keyId: string; key: string }>(server, {
    action: "createKey",
    description: "fixture search",
    actions: ["search", "getDocs"],
    indexes: ["doc*"],
  });
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]) as CryptoKeyPair;
  const token = await ok<{ keyId: string }>(server, {
    action: "createKey",
    publicKey: await crypto.subtle.exportKey("jwk", pair.publicKey),
    actions: ["search"],
    indexes: ["docs"],
  });
  const acme = new Deno.Command(Deno.execPath(), { args: [...args, "project", "create", "acme"], env }).outputSync();
  const acmeKey = JSON.parse(new TextDecoder().decode(acme.stdout)).key as string;
  const asAcme = { ...server, call: (body: Record<string, unknown>) => callAs(server.url, "acme", acmeKey, body) };
  await ok(asAcme, { action: "createIndex", indexName: "notes", docs: docs.notes });

  const expected = {
    docs: Object.fromEntries(
      await Promise.all(
        ["docs", "vectors"].map(async (name) => [name, await ok(server, { action: "getDocs", indexName: name })]),
      ),
    ),
    notes: await ok(asAcme, { action: "getDocs", indexName: "notes" }),
    searches: await Promise.all(FIXTURE_SEARCHES.map((search) => ok(server, { action: "search", ...search }))),
    indexes: await ok(server, { action: "listIndexes" }),
  };
  await server.stop("SIGTERM");
  const dir = dirname(env.DENO_KV_PATH!);
  for await (const entry of Deno.readDir(dir)) {
    if (entry.name.startsWith("quire.kv")) await Deno.copyFile(`${dir}/${entry.name}`, `${out}/${entry.name}`);
  }
  const fixture = {
    commit: values.commit,
    keys: {
      default: server.key,
      acme: acmeKey,
      scoped: scoped.key,
      tokenKeyId: token.keyId,
      tokenPrivateKey: await crypto.subtle.exportKey("jwk", pair.privateKey),
    },
    expected,
  };
  await Deno.writeTextFile(`${out}/fixture.json`, JSON.stringify(fixture, null, 1) + "\n");
  console.log(`Wrote ${out}: the store of ${values.commit} and fixture.json`);
}

function callAs(url: string, projectId: string, key: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-service-version": "v1", "x-project-key": key },
    body: JSON.stringify({ projectId, ...body }),
  });
}
