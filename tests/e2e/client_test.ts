/** End-to-end: the typed client (`client.ts`) against a real server on loopback. */
import assert from "node:assert/strict";
import { type BatchProgress, type DocumentInput, QuireClient, QuireError } from "../../client.ts";
import { startTestServer, type TestServer } from "../_helpers.ts";
import { TINY_BERT } from "../../tools/tiny_bert.ts";

function clientOf(server: TestServer, options: { key?: string; fetch?: typeof fetch } = {}): QuireClient {
  return new QuireClient({
    baseUrl: new URL("/", server.url),
    projectId: "default",
    key: options.key ?? server.key,
    ...options.fetch === undefined ? {} : { fetch: options.fetch },
  });
}

async function assertQuireError(call: Promise<unknown>, status: number, action: string, pattern: RegExp) {
  await assert.rejects(call, (error) => {
    assert.ok(error instanceof QuireError, `a QuireError, not ${error}`);
    assert.equal(error.status, status);
    assert.equal(error.action, action);
    assert.match(error.message, pattern);
    return true;
  });
}

Deno.test("the client runs a whole index lifecycle: batches with progress, paging, search, reads and deletes", async () => {
  await using server = await startTestServer({ env: { MAX_DOCS_PER_REQUEST: "10", MAX_BODY_BYTES: "4096" } });
  let requests = 0;
  const quire = clientOf(server, { fetch: (input, init) => (requests++, fetch(input, init)) });
  const first: DocumentInput[] = [
    { id: "1", text: "Reset your password in Settings", metadata: { lang: "en" } },
    { id: "2", text: "Invoices are under Billing" },
  ];
  assert.equal(await quire.createIndex("faq", first), true);
  assert.equal(requests, 1, "the given fetch is used");

  const many = Array.from({ length: 45 }, (_, i) => ({ id: `m${String(i).padStart(2, "0")}`, text: `note ${i}` }));
  const progress: BatchProgress[] = [];
  const added = await quire.addDocsInBatches("faq", many, { batchSize: 10, onProgress: (p) => progress.push(p) });
  assert.deepEqual(added, { added: 45, updated: 0 });
  assert.deepEqual(progress.map((p) => p.done), [10, 20, 30, 40, 45]);
  assert.ok(progress.every((p) => p.total === 45));

  const big = Array.from({ length: 6 }, (_, i) => ({ id: `big${i}`, text: "word ".repeat(300) }));
  await assertQuireError(quire.addDocs("faq", big), 413, "addDocs", /4096/);
  progress.length = 0;
  const upserted = await quire.addDocsInBatches("faq", [...big, first[1]!], {
    maxBodyBytes: 4096,
    upsert: false,
    onProgress: (p) => progress.push(p),
  });
  assert.deepEqual(upserted, { added: 6, updated: 0, skipped: 1 });
  assert.deepEqual(progress.map((p) => p.done), [2, 4, 7], "split by body bytes, under the server's limit");

  const index = await quire.getIndex("faq");
  assert.equal(index.docCount, 53);
  assert.equal(index.status, "Ready");
  assert.equal(index.model.id, "svc-minilm");

  assert.equal(await quire.createIndex("help", [], { modelId: "svc-mediumlm" }), true);
  const queued = await quire.createIndex("later", first, { wait: false });
  assert.equal(queued.status, "Building");
  const page1 = await quire.listIndexes({ limit: 2 });
  assert.deepEqual(page1.items.map((item) => item.name), ["faq", "help"]);
  assert.ok(page1.nextCursor !== undefined);
  const page2 = await quire.listIndexes({ limit: 2, cursor: page1.nextCursor });
  assert.deepEqual(page2.items.map((item) => item.name), ["later"]);
  assert.equal(page2.nextCursor, undefined, "the last page has no cursor");
  assert.equal((await quire.listIndexes()).items.length, 3);

  const found = await quire.search("faq", "password", { mode: "fulltext", include: ["score"], limit: 3 });
  assert.deepEqual(found.hits.map((hit) => hit.id), ["1"]);
  assert.equal(typeof found.hits[0]!.score, "number");
  assert.equal(found.hits[0]!.text, undefined, "include leaves text out");
  const filtered = await quire.search("faq", "password", { filter: { lang: "en" } });
  assert.deepEqual(filtered.hits.map((hit) => hit.id), ["1"]);

  const asked = await quire.getDocs("faq", { docIds: ["2", "nope", "1"] });
  assert.deepEqual(asked.items, [first[1], first[0]]);
  assert.equal(asked.nextCursor, undefined);
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await quire.getDocs("faq", { limit: 10, cursor });
    ids.push(...page.items.map((doc) => doc.id));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  assert.equal(ids.length, 53);
  assert.deepEqual(ids, [...ids].sort());
  assert.deepEqual((await quire.getDocs("faq")).items.map((doc) => doc.id), ids, "all at once, streamed");

  assert.deepEqual(await quire.deleteDocs("faq", ["1", "nope"]), { deleted: 1 });
  assert.equal(await quire.deleteIndex("faq"), true);
  await assertQuireError(quire.getIndex("faq"), 404, "getIndex", /"faq"/);
});

Deno.test("the client sends a document's vector as vectorBase64, which stores the same float32 values", async () => {
  await using server = await startTestServer();
  const bodies: string[] = [];
  const quire = clientOf(server, { fetch: (input, init) => (bodies.push(String(init?.body)), fetch(input, init)) });
  const vector = Array.from({ length: TINY_BERT.hidden }, (_, i) => Math.sin(i + 0.5));
  await quire.createIndex("own", [{ id: "own", text: "a lantern", vector }]);
  await quire.addDocsInBatches("own", [{ id: "batched", text: "a lamp", vector: vector.map((value) => -value) }]);
  for (const body of bodies) {
    const [sent] = JSON.parse(body).docs;
    assert.equal(sent.vector, undefined, "no JSON numbers");
    assert.equal(typeof sent.vectorBase64, "string");
  }
  const { hits } = await quire.search("own", "", { vector, mode: "vector", include: ["score"] });
  assert.deepEqual(hits.map((hit) => hit.id), ["own", "batched"]);
  assert.ok(Math.abs(hits[0]!.score! - 1) < 1e-6 && Math.abs(hits[1]!.score! + 1) < 1e-6, JSON.stringify(hits));
});

Deno.test("the client rejects refusals with a QuireError carrying status, message and action", async () => {
  await using server = await startTestServer();
  const quire = clientOf(server);
  await quire.createIndex("faq", [{ id: "1", text: "a" }]);
  await assertQuireError(quire.getIndex("nope"), 404, "getIndex", /"nope"/);
  await assertQuireError(quire.createIndex("faq"), 409, "createIndex", /already exists/);
  await assertQuireError(quire.search("faq", "  ", { mode: "fulltext" }), 400, "search", /"query"/);
  await assertQuireError(quire.createIndex("x", [], { modelId: "gpt" }), 400, "createIndex", /Unknown model "gpt"/);
  await assertQuireError(clientOf(server, { key: "qk_wrong" }).listIndexes(), 403, "listIndexes", /key/);
  await assert.rejects(quire.addDocsInBatches("faq", [], { batchSize: 0 }), RangeError);
});

Deno.test("client.ts loads nothing at run time, and its types reach no Deno API", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", new URL("../../client.ts", import.meta.url).pathname],
    stdout: "piped",
    stderr: "null",
  }).output();
  assert.ok(output.success);
  const graph = JSON.parse(new TextDecoder().decode(output.stdout)) as {
    modules: { specifier: string; local?: string; dependencies?: { specifier: string; code?: unknown }[] }[];
  };
  const client = graph.modules.find((module) => module.specifier.endsWith("/client.ts"))!;
  assert.ok((client.dependencies ?? []).length > 0);
  for (const dependency of client.dependencies ?? []) {
    assert.equal(dependency.code, undefined, `${dependency.specifier} is imported for its types only`);
  }
  for (const module of graph.modules) {
    if (module.local === undefined || !module.specifier.startsWith("file:")) continue;
    const source = await Deno.readTextFile(module.local);
    assert.doesNotMatch(source, /\bDeno\./, `${module.specifier} uses no Deno API`);
  }
});

Deno.test("the client passes a language, and full-text options reach the server: typos, highlights, facets, sort", async () => {
  await using server = await startTestServer();
  const quire = clientOf(server);
  const docs: DocumentInput[] = [
    { id: "a", text: "Die Läufer laufen im Park", metadata: { kind: "sport", n: 2 } },
    { id: "b", text: "Der Läufer trinkt Wasser", metadata: { kind: "sport", n: 1 } },
    { id: "c", text: "Das Haus am See", metadata: { kind: "home", n: 3 } },
  ];
  assert.equal(await quire.createIndex("de", docs, { language: "german" }), true);
  assert.equal((await quire.getIndex("de")).language, "german");
  const result = await quire.search("de", "laufr", {
    mode: "fulltext",
    include: ["text", "highlights", "snippet"],
    facets: ["kind"],
    sort: [{ field: "n", order: "asc" }],
  });
  assert.deepEqual(result.hits.map((hit) => hit.id), ["b", "a"]);
  const hit = result.hits[0]!;
  assert.deepEqual(hit.highlights!.map(({ start, end }) => hit.text!.slice(start, end)), ["Läufer"]);
  assert.equal(hit.snippet!.text, hit.text);
  assert.deepEqual(result.facets, { kind: [{ value: "sport", count: 2 }] });
  assert.equal((await quire.search("de", "laufr", { mode: "fulltext", typoTolerance: false, prefix: false })).total, 0);
});
