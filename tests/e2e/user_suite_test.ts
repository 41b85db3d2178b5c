/**
 * quire inside a user's `deno test` suite, run as a user runs it: a project outside this repository that links it and
 * imports `@quire/server/testing` through its own `deno.json`, with no permission but `--allow-net=127.0.0.1`.
 */
import assert from "node:assert/strict";
import { fileURLToPath as fromFileUrl } from "node:url";
import { commandOutput } from "../_command_output.ts";

const REPO = fromFileUrl(new URL("../..", import.meta.url));
const EXAMPLE = fromFileUrl(new URL("../../examples/testing/faq_test.ts", import.meta.url));

/** A user's project in a fresh temporary directory: its `deno.json` links this repo; `files` are its tests. */
async function userProject(files: Record<string, string>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "quire-user-" });
  const config = {
    links: [REPO],
    imports: { "@quire/server": "jsr:@quire/server@^0.1.0" },
    unstable: ["kv"],
  };
  await Deno.writeTextFile(`${dir}/deno.json`, JSON.stringify(config));
  for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(`${dir}/${name}`, text);
  return dir;
}

async function denoTest(dir: string, flags: string[]): Promise<{ code: number; output: string }> {
  const { code, stdout, stderr } = await commandOutput(Deno.execPath(), ["test", "--no-prompt", ...flags], dir);
  return { code, output: stdout + stderr };
}

Deno.test("8 test files, each with its own quire, pass under --parallel and --trace-leaks with --allow-net=127.0.0.1 only", async () => {
  const example = await Deno.readTextFile(EXAMPLE);
  const files = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`faq_${i}_test.ts`, example]));
  const dir = await userProject(files);
  try {
    const started = performance.now();
    const { code, output } = await denoTest(dir, ["--parallel", "--trace-leaks", "--allow-net=127.0.0.1"]);
    assert.equal(code, 0, output);
    assert.match(output, /ok \| 8 passed \| 0 failed/);
    console.log(`8 parallel files in ${(performance.now() - started).toFixed(0)} ms, type check included`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("without --allow-net, startQuire fails with a message that names the flag", async () => {
  const dir = await userProject({ "faq_test.ts": await Deno.readTextFile(EXAMPLE) });
  try {
    const { code, output } = await denoTest(dir, []);
    assert.notEqual(code, 0);
    assert.match(output, /--allow-net/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
