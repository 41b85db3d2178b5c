/** End-to-end: what survives a restart, failure without leftovers, and isolation between projects. */
import assert from "node:assert/strict";
import { Embedder } from "../../src/embedding/embedder.ts";
import { createProject } from "../../src/projects/project_store.ts";
import { LOG_RETENTION_MS } from "../../src/storage/change_log.ts";
import { collectGarbage } from "../../src/storage/garbage_collector.ts";
import { indexKey, logKey, snapshotChunkKey, snapshotPointerKey } from "../../src/storage/kv_keys.ts";
import type { SnapshotPointer } from "../../src/storage/snapshot_store.ts";
import { newTimedId } from "../../src/storage/timed_id.ts";
import { ByteWriter } from "../../src/util/byte_codec.ts";
import { decodeSearchSnapshot } from "../../src/search/search_snapshot_codec.ts";
import type { IndexRecord } from "../../src/storage/index_records.ts";
import {
  assertJsonError,
  randomDoc,
  readWholeSnapshot,
  startServerWithBrokenMediumModel,
  startTestServer,
  testModels,
} from "../_helpers.ts";

Deno.test("every acknowledged write survives a restart", async () => {
  let server = await startTestServer();
  try {
    const docs = [randomDoc({ a: 1 }), randomDoc(), randomDoc()];
    await server.ok({ action: "createIndex", indexName: "keep", docs: docs.slice(0, 2) });
    await server.ok({ action: "addDocs", indexName: "keep", docs: [docs[2]] });
    await server.ok({ action: "deleteDocs", indexName: "keep", docIds: [docs[1]!.id] });
    await server.ok({ action: "createIndex", indexName: "gone", docs: [] });
    await server.ok({ action: "deleteIndex", indexName: "gone" });
    const before = await server.ok({ action: "getIndex", indexName: "keep" });

    server = await server.restart();
    assert.deepEqual(await server.ok({ action: "getIndex", indexName: "keep" }), before);
    const expected = [docs[0], docs[2]].sort((a, b) => a!.id < b!.id ? -1 : 1);
    assert.deepEqual(await server.ok({ action: "getDocs", indexName: "keep" }), expected);
    await assertJsonError(await server.call({ action: "getIndex", indexName: "gone" }), 404);
    assert.equal((await server.ok<unknown[]>({ action: "listIndexes" })).length, 1);
  } finally {
    await server.close();
  }
});

Deno.test("a new index gets a snapshot at once; small writes then only append to the change log", async () => {
  await using server = await startTestServer();
  const docs = [randomDoc({ k: "v" }), randomDoc(), randomDoc()];
  await server.ok({ action: "createIndex", indexName: "snap", docs });
  await server.service.context.background.idle();
  await server.ok({ action: "deleteDocs", indexName: "snap", docIds: [docs[0]!.id] });
  await server.service.context.background.idle();
  const record = (await server.kv.get<IndexRecord>(indexKey("default", "snap"))).value!;
  const snapshot = await readWholeSnapshot(server.kv, record.id);
  assert.equal(snapshot?.revision, 1);
  const index = await decodeSearchSnapshot(snapshot!.bytes);
  assert.equal(index.size, 3);
  for (const doc of docs) {
    assert.deepEqual(index.content(doc.id), { text: doc.text, ...doc.metadata && { metadata: doc.metadata } });
  }
  assert.ok((await server.kv.get(logKey(record.id, 2))).value !== null, "the delete is in the log");
});

Deno.test("a snapshot of an older format is read past once, then replaced at the same revision", async () => {
  let server = await startTestServer();
  try {
    const docs = [randomDoc({ k: "v" }), randomDoc(), randomDoc()];
    await server.ok({ action: "createIndex", indexName: "old", docs });
    await server.service.context.background.idle();
    const record = (await server.kv.get<IndexRecord>(indexKey("default", "old"))).value!;
    // Format 4 had no frames, and began with its name as a string: the u32 of its length, then its bytes.
    const older = new ByteWriter();
    older.string("quire-search-4");
    older.string("english");
    const versionId = newTimedId();
    await server.kv.set(snapshotChunkKey(record.id, versionId, 0), older.bytes());
    const pointer = { versionId, revision: 1, chunks: 1, bytes: older.length };
    await server.kv.set(snapshotPointerKey(record.id), pointer);

    server = await server.restart();
    const found = await server.ok<{ hits: { id: string }[] }>({
      action: "search",
      indexName: "old",
      mode: "fulltext",
      query: docs[1]!.text,
    });
    assert.ok(found.hits.some((hit) => hit.id === docs[1]!.id), "the records were read instead");
    await server.service.context.background.idle();
    const current = (await server.kv.get<SnapshotPointer>(snapshotPointerKey(record.id))).value!;
    assert.notEqual(current.versionId, versionId, "a snapshot this version reads took its place");
    assert.equal(current.revision, 1);
    const snapshot = await readWholeSnapshot(server.kv, record.id);
    assert.equal((await decodeSearchSnapshot(snapshot!.bytes)).size, 3);
  } finally {
    await server.close();
  }
});

Deno.test("once the change log outgrows the snapshot, a new snapshot replaces both, and a restart agrees", async () => {
  let server = await startTestServer();
  try {
    await server.ok({ action: "createIndex", indexName: "grow", docs: [] });
    const long = (i: number) => `document ${i} ${"river storm forest music ".repeat(20)}`;
    for (let batch = 0; batch < 4; batch++) {
      const docs = Array.from({ length: 800 }, (_, i) => ({ id: `g${batch}-${i}`, text: long(batch * 800 + i) }));
      await server.ok({ action: "addDocs", indexName: "grow", docs });
    }
    await server.ok({ action: "deleteDocs", indexName: "grow", docIds: ["g0-1", "g3-5"] });
    await server.service.context.background.idle();
    const record = (await server.kv.get<IndexRecord>(indexKey("default", "grow"))).value!;
    const snapshot = await readWholeSnapshot(server.kv, record.id);
    // Revisions: 1 creates, 2–5 add 800 each (about 0.55 MB of log apiece), 6 deletes two. Two batches outgrow the
    // least log that calls for a snapshot (1 MiB), so the last snapshot leaves less than two behind it; which revision it
    // shows depends on how many batches had landed when it read the state.
    assert.ok(snapshot!.revision >= 4, `the snapshot moved on to revision ${snapshot!.revision}`);
    const docsAt = (revision: number) => revision === 6 ? 3198 : (revision - 1) * 800;
    assert.equal((await decodeSearchSnapshot(snapshot!.bytes)).size, docsAt(snapshot!.revision));
    // Covered entries stay readable for other instances to catch up from, until the retention window has passed.
    await collectGarbage(server.kv, Date.now() + LOG_RETENTION_MS);
    const logged = [];
    for await (const entry of server.kv.list({ prefix: ["log", record.id] })) logged.push(entry.key[2]);
    assert.ok(logged.every((revision) => (revision as number) > snapshot!.revision), "covered log entries are gone");
    const staged = [];
    for await (const entry of server.kv.list({ prefix: ["staged", record.id] })) staged.push(entry.key[2]);
    const named: (string | undefined)[] = [];
    for await (const entry of server.kv.list<{ batchId?: string }>({ prefix: ["log", record.id] })) {
      named.push(entry.value.batchId);
    }
    assert.ok(staged.every((batchId) => named.includes(batchId as string)), "only batches the log names remain");
    const query = { action: "search", indexName: "grow", query: "document 17 river", limit: 20 };
    const before = await server.ok<{ hits: unknown[]; total: number }>(query);
    server = await server.restart();
    const after = await server.ok<{ hits: unknown[]; total: number }>(query);
    assert.deepEqual([after.hits, after.total], [before.hits, before.total]);
    assert.equal(after.total, 3198);
  } finally {
    await server.close();
  }
});

Deno.test("when embedding fails, createIndex is 500 and leaves no index behind", async () => {
  await using server = await startServerWithBrokenMediumModel();
  const originalError = console.error;
  const logged: unknown[][] = [];
  console.error = (...args: unknown[]) => logged.push(args);
  try {
    const response = await server.call({
      action: "createIndex",
      indexName: "doomed",
      docs: [randomDoc()],
      modelId: "svc-mediumlm",
    });
    const error = await assertJsonError(response, 500, /Cannot embed with model "svc-mediumlm"/);
    assert.equal(error.action, "createIndex");
    assert.doesNotMatch(error.error, /onnx|protobuf|\//i, "no internals in the message");
    assert.equal(logged.length, 1, "the failure is logged once");
    await assertJsonError(await server.call({ action: "getIndex", indexName: "doomed" }), 404);
    await server.ok({ action: "createIndex", indexName: "fine", docs: [randomDoc()] });
  } finally {
    console.error = originalError;
  }
});

Deno.test("two projects can use one index name without seeing each other", async () => {
  await using server = await startTestServer();
  const otherKey = (await createProject(server.kv, "other"))!;
  const asOther = (body: Record<string, unknown>) =>
    server.call({ ...body, projectId: "other" }, { "x-project-key": otherKey });
  await server.ok({ action: "createIndex", indexName: "shared", docs: [{ id: "a", text: "mine" }] });
  assert.equal((await asOther({ action: "createIndex", indexName: "shared", docs: [] })).status, 200);
  assert.deepEqual(await (await asOther({ action: "getDocs", indexName: "shared" })).json(), []);
  assert.deepEqual(await server.ok({ action: "getDocs", indexName: "shared" }), [{ id: "a", text: "mine" }]);
  await server.ok({ action: "createIndex", indexName: "private", docs: [] });
  const list = await (await asOther({ action: "listIndexes" })).json();
  assert.deepEqual(list.map((index: { name: string }) => index.name), ["shared"]);
  await assertJsonError(await asOther({ action: "getIndex", indexName: "private" }), 404);
  const crossKey = await server.call({ action: "listIndexes", projectId: "other" });
  await assertJsonError(crossKey, 403);
});

Deno.test("unchanged texts are never embedded twice", async () => {
  const embedded: string[] = [];
  const models = await testModels();
  class CountingEmbedder extends Embedder {
    override embed(modelId: string, texts: string[]): Promise<Float32Array[]> {
      embedded.push(...texts);
      return super.embed(modelId, texts);
    }
  }
  await using server = await startTestServer({
    embedder: () => new CountingEmbedder(models, { cacheDir: "unused", allowRemote: false }),
  });
  await server.ok({
    action: "createIndex",
    indexName: "i",
    docs: [{ id: "a", text: "same words" }, { id: "b", text: "same words" }, { id: "c", text: "other" }],
  });
  assert.deepEqual(embedded.sort(), ["other", "same words"]);
  embedded.length = 0;
  await server.ok({
    action: "addDocs",
    indexName: "i",
    docs: [{ id: "a", text: "same words", metadata: { new: true } }, { id: "c", text: "changed" }],
  });
  assert.deepEqual(embedded, ["changed"]);
});
