/** exportIndex and importIndex over HTTP: a round trip at 10,000 documents, bad lines, and re-embedding on import. */
import assert from "node:assert/strict";
import { QuireClient } from "../../client.ts";
import { assertJsonError, startTestServer, temporaryDir, type TestServer } from "../_helpers.ts";
import { VOCAB_WORDS } from "../../tools/tiny_bert.ts";

/** A deterministic pseudo-random generator, so that failures reproduce. */
function random(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
}

function clientOf(server: TestServer): QuireClient {
  return new QuireClient({ baseUrl: server.url.replace(/\/manage$/, ""), projectId: "default", key: server.key });
}

/** Documents with their own 32-number vectors (the tiny model's width), and a few long ones that are embedded. */
function corpus(count: number): Record<string, unknown>[] {
  const next = random(11);
  const words = () => Array.from({ length: 12 }, () => VOCAB_WORDS[Math.floor(next() * VOCAB_WORDS.length)]).join(" ");
  return Array.from(
    { length: count },
    (_, i) =>
      i % 1000 === 0
        ? { id: `long${i}`, text: `${words()}. `.repeat(80), metadata: { i } }
        : { id: `d${i}`, text: words(), metadata: { i, even: i % 2 === 0 }, vector: Array.from({ length: 32 }, next) },
  );
}

async function exportText(server: TestServer, indexName: string): Promise<string> {
  const response = await server.call({ action: "exportIndex", indexName });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "application/x-ndjson");
  return await response.text();
}

async function importText(server: TestServer, indexName: string, lines: string): Promise<Response> {
  const request = JSON.stringify({ action: "importIndex", projectId: "default", indexName });
  return await server.send(`${request}\n${lines}`, { "content-type": "application/x-ndjson" });
}

Deno.test("an exported index of 10,000 documents imports to the same search results and scores", async () => {
  await using server = await startTestServer();
  const quire = clientOf(server);
  const docs = corpus(10_000);
  await quire.createIndex("source", [], { passages: { maxTokens: 96, overlapTokens: 16 } });
  for (let i = 0; i < docs.length; i += 1000) await quire.addDocs("source", docs.slice(i, i + 1000) as never);
  const exported = await quire.exportIndex("source");
  const copy = await quire.importIndex("copy", exported);
  const source = await quire.getIndex("source");
  assert.equal(copy.docCount, 10_000);
  assert.equal(copy.passageCount, source.passageCount);
  assert.ok(source.passageCount > 10_000, "the long documents have several passages");
  const next = random(5);
  // Vector queries carry a filter that matches everything, so that both indexes are scanned exactly: their HNSW graphs
  // differ (built in another order), and two approximate top-10s may differ by a document.
  const queries = [
    { query: "the of", mode: "fulltext" as const },
    { query: "", mode: "vector" as const, vector: Array.from({ length: 32 }, next), filter: {} },
    { query: VOCAB_WORDS.slice(0, 6).join(" "), mode: "hybrid" as const, filter: { even: true } },
    {
      query: VOCAB_WORDS.slice(3, 9).join(" "),
      mode: "vector" as const,
      filter: {},
      include: ["score" as const, "passage" as const],
    },
  ];
  for (const { query, ...options } of queries) {
    const [a, b] = [await quire.search("source", query, options), await quire.search("copy", query, options)];
    assert.deepEqual(b.hits.map((hit) => hit.id), a.hits.map((hit) => hit.id), options.mode);
    b.hits.forEach((hit, i) => assert.ok(Math.abs(hit.score! - a.hits[i]!.score!) <= 1e-6, `${options.mode} ${i}`));
    assert.deepEqual(b.hits.map((hit) => hit.passage), a.hits.map((hit) => hit.passage));
  }
  assert.equal(await exportText(server, "copy").then((text) => text.split("\n").length), 10_002);
});

Deno.test("a malformed import line is 400 naming it, and nothing is created", async () => {
  await using server = await startTestServer();
  await server.ok({ action: "createIndex", indexName: "s", docs: corpus(20) });
  const lines = (await exportText(server, "s")).trimEnd().split("\n");
  const broken = [
    [[...lines.slice(0, 5), "{not json", ...lines.slice(5)], /Line 7 is not valid JSON/],
    [[...lines.slice(0, 3), JSON.stringify({ id: "x", text: "t" }), ...lines.slice(3)], /Line 5 is not a document/],
    [[lines[0]!, lines[1]!, lines[1]!], /Line 4: duplicate document id/],
    [[JSON.stringify({ quire: "index", format: 1, model: { id: "nope", version: "1" } })], /unknown model "nope"/],
    [[lines[0]!, lines[1]!.replace(/"vector":"[^"]*"/, '"vector":"AAAA"')], /Line 3: a passage vector/],
  ] as const;
  for (const [body, pattern] of broken) {
    await assertJsonError(await importText(server, "t", body.join("\n")), 400, pattern);
    await assertJsonError(await server.call({ action: "getIndex", indexName: "t" }), 404);
  }
  await assertJsonError(await importText(server, "s", lines.join("\n")), 409, /already exists/);
  await assertJsonError(await server.call({ action: "importIndex", indexName: "t" }), 415, /x-ndjson/);
  const imported = await importText(server, "t", lines.join("\n"));
  assert.equal(imported.status, 200);
  assert.equal((await imported.json()).docCount, 20);
});

Deno.test("cli export and import back up a whole project and restore it into another server", async () => {
  await using from = await startTestServer();
  await using to = await startTestServer();
  await from.ok({ action: "createIndex", indexName: "a", docs: corpus(30) });
  await from.ok({ action: "createIndex", indexName: "b/c", docs: corpus(5) });
  const backup = `${await temporaryDir("quire-transfer-")}/project.jsonl`;
  const cli = async (server: TestServer, args: string[], file: Deno.FsFile) => {
    const env = { QUIRE_URL: server.url.replace(/\/manage$/, ""), QUIRE_KEY: server.key };
    const command = new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-net", "--allow-env", "--allow-read", "main.ts", ...args],
      env,
      stdin: args[0] === "import" ? "piped" : "null",
      stdout: args[0] === "export" ? "piped" : "null",
      stderr: "piped",
    }).spawn();
    if (args[0] === "import") await file.readable.pipeTo(command.stdin);
    else await command.stdout.pipeTo(file.writable);
    const { code, stderr } = await command.output();
    return `${code}: ${new TextDecoder().decode(stderr)}`;
  };
  assert.match(await cli(from, ["export"], await Deno.create(backup)), /^0: Exported 2 index\(es\): a, b\/c/);
  assert.match(await cli(to, ["import"], await Deno.open(backup)), /^0: Imported 2 index\(es\): a, b\/c/);
  for (const name of ["a", "b/c"]) {
    assert.equal(await exportText(to, name).then(withoutTime), await exportText(from, name).then(withoutTime), name);
  }
  assert.match(await cli(to, ["import", "a2"], await Deno.open(backup)), /^1: import failed: .*several indexes/);
});

function withoutTime(lines: string): string {
  return lines.replace(/"exportedAt":"[^"]*"/, "");
}
