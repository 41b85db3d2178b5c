/**
 * Undo for `deleteIndex`: within `UNDO_WINDOW` a deleted index is invisible (404) and its name free, then
 * `restoreIndex` brings it back as it was, searchable; `listDeletedIndexes` shows what can be restored; after the window
 * the collector reclaims its storage and `restoreIndex` is 404.
 */
import assert from "node:assert/strict";
import { assertJsonError, startTestServer } from "../_helpers.ts";
import { collectGarbage } from "../../src/storage/garbage_collector.ts";
import { docsPrefix } from "../../src/storage/kv_keys.ts";

const DOCS = [
  { id: "d1", text: "how to reset a password", metadata: { topic: "account" } },
  { id: "d2", text: "refunds take five days", metadata: { topic: "billing" } },
];

interface IndexView {
  id: string;
  name: string;
  docCount: number;
  version: string;
}

Deno.test("a deleted index is 404 and its name free until restoreIndex brings it back as it was", async () => {
  await using server = await startTestServer();
  await server.ok({ action: "createIndex", indexName: "faq", docs: DOCS });
  await server.ok({ action: "addDocs", indexName: "faq", docs: [{ id: "d3", text: "shipping is free" }] });
  const before = await server.ok<IndexView>({ action: "getIndex", indexName: "faq" });
  await server.ok({ action: "search", indexName: "faq", query: "password" });
  assert.equal(await server.ok({ action: "deleteIndex", indexName: "faq" }), true);

  await assertJsonError(await server.call({ action: "getIndex", indexName: "faq" }), 404);
  await assertJsonError(await server.call({ action: "search", indexName: "faq", query: "password" }), 404);
  assert.deepEqual(await server.ok({ action: "listIndexes" }), []);
  const deleted = await server.ok<(IndexView & { deletedAt: string; expiresAt: string })[]>({
    action: "listDeletedIndexes",
  });
  assert.equal(deleted.length, 1);
  assert.equal(deleted[0]!.name, "faq");
  assert.equal(deleted[0]!.docCount, 3);
  const window = Date.parse(deleted[0]!.expiresAt) - Date.parse(deleted[0]!.deletedAt);
  assert.equal(window, 24 * 3600_000, "the default UNDO_WINDOW is 24h");

  // The name is free: a new index takes it, and restoring the old one is then 409.
  await server.ok({ action: "createIndex", indexName: "faq", docs: [{ id: "new", text: "a new index" }] });
  await assertJsonError(await server.call({ action: "restoreIndex", indexName: "faq" }), 409, /has that name now/);
  await server.ok({ action: "deleteIndex", indexName: "faq" });
  assert.equal((await server.ok<unknown[]>({ action: "listDeletedIndexes" })).length, 2);

  // The latest deletion of the name comes back by default; an earlier one by its id.
  assert.equal((await server.ok<IndexView>({ action: "restoreIndex", indexName: "faq" })).docCount, 1);
  await server.ok({ action: "deleteIndex", indexName: "faq" });
  await collectGarbage(server.kv);
  const restored = await server.ok<IndexView>({ action: "restoreIndex", indexName: "faq", indexId: before.id });
  assert.equal(restored.id, before.id, "the same index, not a copy");
  const { memoryBytes: _now, ...after } = await server.ok<IndexView & { memoryBytes?: number }>({
    action: "getIndex",
    indexName: "faq",
  });
  const { memoryBytes: _then, ...was } = before as IndexView & { memoryBytes?: number };
  assert.deepEqual(after, was, "as it was");
  const { hits } = await server.ok<{ hits: { id: string }[] }>({
    action: "search",
    indexName: "faq",
    query: "password",
    mode: "fulltext",
  });
  assert.deepEqual(hits.map((hit) => hit.id), ["d1"]);
  assert.equal((await server.ok<unknown[]>({ action: "getDocs", indexName: "faq" })).length, 3);
  await assertJsonError(await server.call({ action: "restoreIndex", indexName: "nothing" }), 404, /UNDO_WINDOW/);
});

Deno.test("after UNDO_WINDOW the collector reclaims a deleted index, and with 0 there is no undo", async () => {
  await using server = await startTestServer({ env: { UNDO_WINDOW: "1s" } });
  await server.ok({ action: "createIndex", indexName: "short", docs: DOCS });
  const { id } = await server.ok<IndexView>({ action: "getIndex", indexName: "short" });
  await server.ok({ action: "deleteIndex", indexName: "short" });
  await collectGarbage(server.kv);
  assert.equal((await Array.fromAsync(server.kv.list({ prefix: docsPrefix(id) }))).length, 2, "kept in the window");
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  assert.deepEqual(await server.ok({ action: "listDeletedIndexes" }), []);
  await collectGarbage(server.kv);
  assert.equal((await Array.fromAsync(server.kv.list({ prefix: docsPrefix(id) }))).length, 0, "reclaimed after it");
  await assertJsonError(await server.call({ action: "restoreIndex", indexName: "short" }), 404);

  await using off = await startTestServer({ env: { UNDO_WINDOW: "0" } });
  await off.ok({ action: "createIndex", indexName: "gone", docs: DOCS });
  await off.ok({ action: "deleteIndex", indexName: "gone" });
  assert.deepEqual(await off.ok({ action: "listDeletedIndexes" }), []);
  await assertJsonError(await off.call({ action: "restoreIndex", indexName: "gone" }), 404);
});
