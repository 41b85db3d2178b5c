/**
 * The package publishes cleanly and documents itself: `deno publish --dry-run` (no slow types, a licence, analysable
 * imports), `deno doc --lint` on every export, and the README's TypeScript blocks type-check against the API.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { commandOutput } from "../_command_output.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

async function deno(args: string[]): Promise<{ code: number; output: string }> {
  const { code, stdout, stderr } = await commandOutput(Deno.execPath(), args, REPO);
  // Deno's warnings about @types/node's own references say nothing about this package.
  const output = (stdout + stderr).split("\n")
    .filter((line) => !/^Warning Failed resolving types|^\s+at file:.*@types\/node/.test(line)).join("\n");
  return { code, output };
}

Deno.test("deno publish --dry-run passes, with no slow types and no warnings", async () => {
  const { code, output } = await deno(["publish", "--dry-run", "--allow-dirty"]);
  assert.equal(code, 0, output);
  assert.doesNotMatch(output, /^error/m, output);
  // The wasm backend imports transformers.js's web build by URL, since the package exports no path to it (its "node"
  // condition wins under Deno); the URL is written out as a `file:` one, so publishing sees no import map involved.
  const warnings = [...output.matchAll(/^warning\[([\w-]+)\][^\n]*\n\s*--> ([^:]+)/gm)]
    .map(([, rule, path]) => `${rule} ${path!.replace(REPO, "")}`);
  assert.deepEqual(warnings, []);
});

Deno.test("deno doc --lint passes on every export", async () => {
  const config = JSON.parse(await Deno.readTextFile(`${REPO}/deno.json`));
  const entries = Object.values(config.exports) as string[];
  assert.deepEqual(Object.keys(config.exports), [".", "./client", "./testing"]);
  const { code, output } = await deno(["doc", "--lint", ...entries]);
  assert.equal(code, 0, output);
});

Deno.test("the README's TypeScript blocks type-check", async () => {
  const { code, output } = await deno(["check", "--doc-only", "README.md"]);
  assert.equal(code, 0, output);
});
