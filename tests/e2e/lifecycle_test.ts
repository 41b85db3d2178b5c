/** End-to-end: every action over real HTTP, a real KV file and a generated model. */
import assert from "node:assert/strict";
import { assertJsonError, randomDoc, startTestServer } from "../_helpers.ts";

interface IndexView {
  id: string;
  name: string;
  version: string;
  status: string;
  docCount: number;
  createdAt: string;
  updatedAt: string;
  model: { id: string; version: string };
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

Deno.test("createIndex then getIndex shows the spec's Index object", async () => {
  await using server = await startTestServer();
  const docs = [randomDoc(), randomDoc({ lang: "en" })];
  assert.equal(await server.ok({ action: "createIndex", indexName: "faq", docs }), true);
  const index = await server.ok<IndexView>({ action: "getIndex", indexName: "faq" });
  assert.match(index.id, UUID);
  assert.equal(index.name, "faq");
  assert.equal(index.status, "Ready");
  assert.equal(index.docCount, 2);
  assert.equal(typeof index.version, "string");
  assert.match(index.createdAt, ISO_MS);
  assert.equal(index.updatedAt, index.createdAt);
  assert.deepEqual(index.model, { id: "svc-minilm", version: "tiny-minilm-1" });
  assert.deepEqual(Object.keys(index).sort(), [
    "createdAt",
    "docCount",
    "id",
    "language",
    "model",
    "name",
    "passageCount",
    "settings",
    "status",
    "updatedAt",
    "version",
  ]);
  assert.deepEqual((index as { settings?: unknown }).settings, { synonyms: [], pins: [] }, "none until updateSettings");
});

Deno.test("createIndex accepts svc-mediumlm and an empty docs array, and refuses a taken name with 409", async () => {
  await using server = await startTestServer();
  await server.ok({ action: "createIndex", indexName: "medium", docs: [], modelId: "svc-mediumlm" });
  const index = await server.ok<IndexView>({ action: "getIndex", indexName: "medium" });
  assert.deepEqual(index.model, { id: "svc-mediumlm", version: "tiny-mediumlm-1" });
  assert.equal(index.docCount, 0);
  const again = await server.call({ action: "createIndex", indexName: "medium", docs: [randomDoc()] });
  const body = await assertJsonError(again, 409, /"medium" already exists/);
  assert.equal(body.action, "createIndex");
});

Deno.test("createIndex refuses an unknown model with 400 naming the known ones", async () => {
  await using server = await startTestServer();
  const response = await server.call({ action: "createIndex", indexName: "x", docs: [], modelId: "gpt-9" });
  await assertJsonError(response, 400, /Unknown model "gpt-9".*"svc-mediumlm", "svc-minilm"/);
  await assertJsonError(await server.call({ action: "getIndex", indexName: "x" }), 404);
});

Deno.test("concurrent createIndex of one name: exactly one succeeds, the others get 409", async () => {
  await using server = await startTestServer();
  const responses = await Promise.all(
    Array.from({ length: 8 }, () => server.call({ action: "createIndex", indexName: "race", docs: [randomDoc()] })),
  );
  const statuses = responses.map((response) => response.status).sort();
  await Promise.all(responses.map((response) => response.body?.cancel()));
  assert.deepEqual(statuses, [200, 409, 409, 409, 409, 409, 409, 409]);
});

Deno.test("listIndexes returns only the caller's indexes, sorted by name", async () => {
  await using server = await startTestServer();
  assert.deepEqual(await server.ok({ action: "listIndexes" }), []);
  for (const name of ["zeta", "alpha", "Mid"]) await server.ok({ action: "createIndex", indexName: name, docs: [] });
  const list = await server.ok<IndexView[]>({ action: "listIndexes" });
  assert.deepEqual(list.map((index) => index.name), ["Mid", "alpha", "zeta"]);
  assert.equal(list[0]!.status, "Ready");
});

Deno.test("addDocs counts new docs as added and existing ones as updated, even when identical", async () => {
  await using server = await startTestServer();
  const [a, b] = [randomDoc(), randomDoc()];
  await server.ok({ action: "createIndex", indexName: "i", docs: [a] });
  const before = await server.ok<IndexView>({ action: "getIndex", indexName: "i" });
  const result = await server.ok({ action: "addDocs", indexName: "i", docs: [a, b] });
  assert.deepEqual(result, { added: 1, updated: 1 });
  const after = await server.ok<IndexView>({ action: "getIndex", indexName: "i" });
  assert.equal(after.docCount, 2);
  assert.notEqual(after.version, before.version);
  assert.ok(after.updatedAt > before.updatedAt, "updatedAt moves");
  assert.equal(after.createdAt, before.createdAt);
});

Deno.test("addDocs with upsert false leaves existing docs untouched and reports them as skipped", async () => {
  await using server = await startTestServer();
  await server.ok({ action: "createIndex", indexName: "i", docs: [{ id: "a", text: "old text" }] });
  const result = await server.ok({
    action: "addDocs",
    indexName: "i",
    docs: [{ id: "a", text: "new text" }, { id: "b", text: "bee" }],
    options: { upsert: false },
  });
  assert.deepEqual(result, { added: 1, updated: 0, skipped: 1 });
  const docs = await server.ok({ action: "getDocs", indexName: "i" });
  assert.deepEqual(docs, [{ id: "a", text: "old text" }, { id: "b", text: "bee" }]);
});

Deno.test("addDocs replaces text and metadata, and removes metadata that the new doc lacks", async () => {
  await using server = await startTestServer();
  await server.ok({
    action: "createIndex",
    indexName: "i",
    docs: [{ id: "a", text: "first", metadata: { n: 1 } }, { id: "b", text: "second", metadata: { n: 2 } }],
  });
  await server.ok({
    action: "addDocs",
    indexName: "i",
    docs: [{ id: "a", text: "first again", metadata: { n: 10, tags: ["x"] } }, { id: "b", text: "second" }],
  });
  assert.deepEqual(await server.ok({ action: "getDocs", indexName: "i" }), [
    { id: "a", text: "first again", metadata: { n: 10, tags: ["x"] } },
    { id: "b", text: "second" },
  ]);
});

Deno.test("addDocs and deleteDocs on an unknown index give 404", async () => {
  await using server = await startTestServer();
  const add = await server.call({ action: "addDocs", indexName: "nope", docs: [randomDoc()] });
  assert.equal((await assertJsonError(add, 404, /Index "nope" not found/)).action, "addDocs");
  await assertJsonError(await server.call({ action: "deleteDocs", indexName: "nope", docIds: ["a"] }), 404);
  await assertJsonError(await server.call({ action: "getDocs", indexName: "nope" }), 404);
  await assertJsonError(await server.call({ action: "getIndex", indexName: "nope" }), 404);
  await assertJsonError(await server.call({ action: "deleteIndex", indexName: "nope" }), 404);
});

Deno.test("deleteDocs removes existing ids, ignores unknown ones and counts what it removed", async () => {
  await using server = await startTestServer();
  const docs = [randomDoc(), randomDoc(), randomDoc()];
  await server.ok({ action: "createIndex", indexName: "i", docs });
  const result = await server.ok({
    action: "deleteDocs",
    indexName: "i",
    docIds: [docs[0]!.id, "missing", docs[2]!.id, docs[0]!.id],
  });
  assert.deepEqual(result, { deleted: 2 });
  const index = await server.ok<IndexView>({ action: "getIndex", indexName: "i" });
  assert.equal(index.docCount, 1);
  assert.deepEqual(await server.ok({ action: "getDocs", indexName: "i" }), [docs[1]]);
});

Deno.test("getDocs returns docs in id order, or the asked ids that exist in the order asked", async () => {
  await using server = await startTestServer();
  const docs = [
    { id: "c", text: "three" },
    { id: "a", text: "one", metadata: { k: "v" } },
    { id: "b", text: "two" },
  ];
  await server.ok({ action: "createIndex", indexName: "i", docs });
  const all = await server.ok({ action: "getDocs", indexName: "i" });
  assert.deepEqual(all, [docs[1], docs[2], docs[0]]);
  const some = await server.ok({ action: "getDocs", indexName: "i", options: { docIds: ["c", "zzz", "a"] } });
  assert.deepEqual(some, [docs[0], docs[1]]);
  assert.deepEqual(await server.ok({ action: "getDocs", indexName: "i", options: { docIds: [] } }), []);
});

Deno.test("deleteIndex removes the index; the name can be created again and starts empty", async () => {
  await using server = await startTestServer();
  await server.ok({ action: "createIndex", indexName: "i", docs: [randomDoc(), randomDoc()] });
  const first = await server.ok<IndexView>({ action: "getIndex", indexName: "i" });
  assert.equal(await server.ok({ action: "deleteIndex", indexName: "i" }), true);
  await assertJsonError(await server.call({ action: "getIndex", indexName: "i" }), 404);
  await assertJsonError(await server.call({ action: "deleteIndex", indexName: "i" }), 404);
  await server.ok({ action: "createIndex", indexName: "i", docs: [] });
  const second = await server.ok<IndexView>({ action: "getIndex", indexName: "i" });
  assert.notEqual(second.id, first.id);
  assert.equal(second.docCount, 0);
  assert.deepEqual(await server.ok({ action: "getDocs", indexName: "i" }), []);
});

Deno.test("a large addDocs that spans many KV commits is applied whole", async () => {
  await using server = await startTestServer();
  await server.ok({ action: "createIndex", indexName: "big", docs: [] });
  const long = "forest river ".repeat(12_000);
  const docs = Array.from({ length: 40 }, (_, i) => ({ id: `d${String(i).padStart(3, "0")}`, text: `${i} ${long}` }));
  assert.deepEqual(await server.ok({ action: "addDocs", indexName: "big", docs }), { added: 40, updated: 0 });
  const stored = await server.ok<{ id: string; text: string }[]>({ action: "getDocs", indexName: "big" });
  assert.deepEqual(stored, docs);
  assert.equal((await server.ok<IndexView>({ action: "getIndex", indexName: "big" })).docCount, 40);
});
