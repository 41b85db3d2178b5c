/** End-to-end through `main.ts` as a subprocess: first start, the printed key, SIGTERM, the CLI and `--help`. */
import assert from "node:assert/strict";
import { CONFIG_HELP } from "../../src/config.ts";
import { PERMISSIONS, serverEnvironment, startServerProcess } from "../_server_process.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

async function runCli(env: Record<string, string>, ...args: string[]): Promise<Deno.CommandOutput> {
  return await new Deno.Command(Deno.execPath(), { args: ["run", ...PERMISSIONS, MAIN, ...args], env }).output();
}

Deno.test("first start creates project default, prints its key once and where it listens; SIGTERM exits 0", async () => {
  const env = await serverEnvironment();
  const server = await startServerProcess(env);
  assert.match(server.key, /^qk_/);
  assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/manage$/);
  const response = await server.call({ action: "createIndex", indexName: "hello", docs: [] });
  assert.equal(await response.json(), true);
  assert.equal(await server.stop("SIGTERM"), 0);

  const listed = await runCli(env, "project", "list");
  assert.equal(listed.code, 0);
  assert.equal(JSON.parse(new TextDecoder().decode(listed.stdout)).projectId, "default");
});

Deno.test("on SIGTERM or SIGINT, in-flight writes finish and land, new requests are refused, and the exit is 0", async () => {
  const env = await serverEnvironment();
  let key = "";
  let landed = 0;
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    const server = await startServerProcess(env, key);
    key = server.key;
    // A first write loads the model, so that the one signalled is surely being served, not still being accepted.
    const warm = await server.call({
      action: "createIndex",
      indexName: `warm-${signal}`,
      docs: [{ id: "w", text: "warm" }],
    });
    assert.equal(warm.status, 200);
    await warm.body?.cancel();
    const docs = Array.from({ length: 1500 }, (_, i) => ({ id: `${signal}-${i}`, text: `graceful text number ${i}` }));
    let answeredAt = Infinity;
    const write = server.call({ action: "createIndex", indexName: signal, docs }).then((response) => {
      answeredAt = performance.now();
      return response;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const signalledAt = performance.now();
    const stopped = server.stop(signal);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const late = await server.call({ action: "listIndexes" }).then((response) => response.status, () => "refused");
    const response = await write;
    assert.equal(response.status, 200, `the write in flight at ${signal} finishes`);
    assert.ok(answeredAt > signalledAt, "the write was still in flight when the signal came");
    assert.equal(await response.json(), true);
    assert.equal(late, "refused", `a request after ${signal} is refused`);
    assert.equal(await stopped, 0, `exit code after ${signal}`);
    landed++;
  }
  {
    await using server = await startServerProcess(env, key);
    for (const signal of ["SIGTERM", "SIGINT"]) {
      const index = await (await server.call({ action: "getIndex", indexName: signal })).json();
      assert.equal(index.docCount, 1500, `the write in flight at ${signal} landed whole`);
    }
  }
  console.log(
    `graceful lifecycle: ${landed} signals, ${landed} in-flight writes finished and landed, exit 0, 0 violations`,
  );
});

Deno.test("cli project create prints exactly one JSON line on stdout", async () => {
  const env = await serverEnvironment();
  const created = await runCli(env, "project", "create", "acme");
  assert.equal(created.code, 0);
  const stdout = new TextDecoder().decode(created.stdout);
  assert.equal(stdout.trim().split("\n").length, 1);
  const { projectId, key } = JSON.parse(stdout);
  assert.equal(projectId, "acme");
  assert.match(key, /^qk_/);
  const again = await runCli(env, "project", "create", "acme");
  assert.equal(again.code, 1);
  assert.match(new TextDecoder().decode(again.stderr), /already exists/);
});

Deno.test("--help prints every configuration variable, and a bad variable stops the start with one line", async () => {
  const help = await runCli({}, "--help");
  const text = new TextDecoder().decode(help.stdout);
  for (const name of Object.keys(CONFIG_HELP)) assert.match(text, new RegExp(`\\b${name}\\b`));
  const bad = await runCli({ ...await serverEnvironment(), PORT: "many" });
  assert.equal(bad.code, 1);
  assert.match(new TextDecoder().decode(bad.stderr), /^Invalid PORT "many": /);
});
