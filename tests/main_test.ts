/** End-to-end through `main.ts` as a subprocess: first start, the printed key, SIGTERM, the CLI and `--help`. */
import assert from "node:assert/strict";
import { CONFIG_HELP } from "../src/config.ts";
import { testModels } from "./_helpers.ts";

const PERMISSIONS = ["--allow-net", "--allow-env", "--allow-read", "--allow-write", "--allow-ffi", "--allow-sys"];
const MAIN = new URL("../main.ts", import.meta.url).pathname;

async function environment(): Promise<Record<string, string>> {
  const dir = await Deno.makeTempDir({ prefix: "quire-main-" });
  await Deno.writeTextFile(`${dir}/models.json`, JSON.stringify(await testModels()));
  return {
    HOSTNAME: "127.0.0.1",
    PORT: "0",
    DENO_KV_PATH: `${dir}/data/quire.kv`,
    MODELS_FILE: `${dir}/models.json`,
    ALLOW_REMOTE_MODELS: "false",
  };
}

async function runCli(env: Record<string, string>, ...args: string[]): Promise<Deno.CommandOutput> {
  return await new Deno.Command(Deno.execPath(), { args: ["run", ...PERMISSIONS, MAIN, ...args], env }).output();
}

Deno.test("first start creates project default, prints its key once and where it listens; SIGTERM exits 0", async () => {
  const env = await environment();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...PERMISSIONS, MAIN],
    env,
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let output = "";
  while (!/listening on (\S+)/.test(output)) {
    const { done, value } = await lines.read();
    if (done) break;
    output += value;
  }
  const key = output.match(/key is shown only now: (\S+)/)?.[1];
  const url = output.match(/listening on (\S+)/)?.[1];
  assert.ok(key, output);
  assert.match(url ?? "", /^http:\/\/127\.0\.0\.1:\d+\/manage$/);
  const response = await fetch(url!, {
    method: "POST",
    headers: { "content-type": "application/json", "x-service-version": "v1", "x-project-key": key! },
    body: JSON.stringify({ action: "createIndex", projectId: "default", indexName: "hello", docs: [] }),
  });
  assert.equal(await response.json(), true);
  child.kill("SIGTERM");
  assert.equal((await child.status).code, 0);
  await lines.cancel();

  const listed = await runCli(env, "project", "list");
  assert.equal(listed.code, 0);
  assert.equal(JSON.parse(new TextDecoder().decode(listed.stdout)).projectId, "default");
});

Deno.test("cli project create prints exactly one JSON line on stdout", async () => {
  const env = await environment();
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
  const bad = await runCli({ ...await environment(), PORT: "many" });
  assert.equal(bad.code, 1);
  assert.match(new TextDecoder().decode(bad.stderr), /^Invalid PORT: /);
});
