/** End-to-end through `main.ts` as a subprocess: first start, the printed key, SIGTERM, the CLI and `--help`. */
import assert from "node:assert/strict";
import { CONFIG_HELP } from "../src/config.ts";
import { PERMISSIONS, serverEnvironment, startServerProcess } from "./_server_process.ts";

const MAIN = new URL("../main.ts", import.meta.url).pathname;

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
  assert.match(new TextDecoder().decode(bad.stderr), /^Invalid PORT: /);
});
