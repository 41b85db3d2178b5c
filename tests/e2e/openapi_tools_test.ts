/**
 * The OpenAPI document as common tools take it: openapi-typescript generates types from `GET /openapi.json`, and a
 * small openapi-fetch program type-checks with no cast (an index created with metadata, a search with a filter, its
 * hits read) and then runs against a live service. Both tools come from npm, run through `npm:` specifiers.
 */
import assert from "node:assert/strict";
import { startQuire } from "../../src/testing/start_quire.ts";
import { commandOutput } from "../_command_output.ts";

const OPENAPI_TYPESCRIPT = "npm:openapi-typescript@7.10.1";
const OPENAPI_FETCH = "npm:openapi-fetch@0.17.0";
const REDOCLY = "@redocly/cli@2.11.1";
const REDOCLY_CONFIG = new URL("../../redocly.yaml", import.meta.url);

const PROGRAM = `
import createClient from "${OPENAPI_FETCH}";
import type { paths } from "./types.ts";

const client = createClient<paths>({ baseUrl: Deno.args[0] });
const headers = { "x-service-version": "v1" as const, "x-project-key": Deno.args[2]! };
const projectId = Deno.args[1]!;
const created = await client.POST("/manage", {
  params: { header: headers },
  body: {
    action: "createIndex",
    projectId,
    indexName: "faq",
    docs: [
      { id: "pw", text: "Reset your password from the sign-in page", metadata: { topic: "account", year: 2026 } },
      { id: "ship", text: "Orders ship within two days", metadata: { topic: "orders" } },
    ],
  },
});
if (created.error !== undefined) throw new Error(created.error.error);
const found = await client.POST("/manage", {
  params: { header: headers },
  body: { action: "search", projectId, indexName: "faq", query: "password", filter: { topic: { $eq: "account" } } },
});
const data = found.data;
if (data === undefined || typeof data !== "object" || !("hits" in data)) throw new Error("no search result");
const ids: string[] = data.hits.map((hit) => hit.id);
console.log(JSON.stringify(ids));
`;

Deno.test("redocly lint, with the recommended rules less those redocly.yaml turns off with a reason, is clean", async () => {
  await using quire = await startQuire();
  const dir = await Deno.makeTempDir({ prefix: "quire-redocly-" });
  try {
    await Deno.writeTextFile(`${dir}/openapi.json`, await (await fetch(`${quire.url}/openapi.json`)).text());
    await Deno.copyFile(REDOCLY_CONFIG, `${dir}/redocly.yaml`);
    const { code, stdout, stderr } = await commandOutput(
      "npx",
      ["-y", REDOCLY, "lint", "--config", "redocly.yaml", "openapi.json"],
      dir,
    );
    const output = stdout + stderr;
    assert.equal(code, 0, output);
    assert.match(output, /Your API description is valid/);
    assert.doesNotMatch(output, /warning/i, output);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

async function run(args: string[], cwd: string): Promise<string> {
  const { code, stdout, stderr } = await commandOutput(Deno.execPath(), args, cwd);
  assert.equal(code, 0, `deno ${args.join(" ")}:\n${stdout}${stderr}`);
  return stdout;
}

Deno.test("openapi-typescript types the document, and an openapi-fetch program type-checks with no cast and runs", async () => {
  await using quire = await startQuire();
  const dir = await Deno.makeTempDir({ prefix: "quire-openapi-" });
  try {
    await Deno.writeTextFile(`${dir}/deno.json`, JSON.stringify({ nodeModulesDir: "none" }));
    await Deno.writeTextFile(`${dir}/openapi.json`, await (await fetch(`${quire.url}/openapi.json`)).text());
    await run(["run", "-A", OPENAPI_TYPESCRIPT, "openapi.json", "-o", "types.ts"], dir);
    const types = await Deno.readTextFile(`${dir}/types.ts`);
    // A free-form object (metadata, a filter) typed as `Record<string, never>` would take no field at all; the
    // generator's own empty `webhooks` and `$defs` are top-level exports, and they are.
    assert.doesNotMatch(types, /^\s+.*Record<string, never>/m);
    await Deno.writeTextFile(`${dir}/program.ts`, PROGRAM);
    await run(["check", "program.ts"], dir);
    const output = await run(
      ["run", "--allow-net=127.0.0.1", "program.ts", quire.url, quire.projectId, quire.key],
      dir,
    );
    assert.deepEqual(JSON.parse(output), ["pw"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
