/** Unit: the KV layout of documents, staged writes, snapshots and garbage collection, over an in-memory KV. */
import assert from "node:assert/strict";
import { changeMutations, listDocs, readDocHeads, readDocs } from "../../src/storage/doc_records.ts";
import { decodeDocChanges, type DocChange, encodeDocChanges } from "../../src/storage/doc_change_codec.ts";
import {
  commitIndexChanges,
  createIndexRecord,
  deleteIndexRecord,
  type IndexRecord,
  readSettledIndex,
} from "../../src/storage/index_records.ts";
import { takeSnapshotLease, writeSnapshot } from "../../src/storage/snapshot_store.ts";
import { collectGarbage } from "../../src/storage/garbage_collector.ts";
import { batchMutations, MAX_CHUNK_BYTES } from "../../src/storage/kv_batches.ts";
import { indexKey, logKey } from "../../src/storage/kv_keys.ts";
import { type LogEntry, readLogTail, truncateLog } from "../../src/storage/change_log.ts";
import { ABANDONED_AFTER_MS, newTimedId } from "../../src/storage/timed_id.ts";
import { readWholeSnapshot } from "../_helpers.ts";

function doc(text: string, metadata?: Record<string, unknown>) {
  const vector = Float32Array.from({ length: 8 }, (_, i) => i / 8 + text.length);
  const passages = [{ start: 0, end: text.length, vector }];
  return metadata === undefined ? { text, passages } : { text, metadata, passages };
}

function record(overrides: Partial<IndexRecord> = {}): IndexRecord {
  const now = new Date().toISOString();
  return {
    id: crypto.randomUUID(),
    projectId: "p",
    name: "i",
    modelId: "m",
    modelVersion: "1",
    revision: 1,
    docCount: 0,
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
}

async function countKeys(kv: Deno.Kv, prefix: Deno.KvKey): Promise<number> {
  let count = 0;
  for await (const _ of kv.list({ prefix })) count++;
  return count;
}

Deno.test("a long text is split into parts below the value limit and read back whole", async () => {
  using kv = await Deno.openKv(":memory:");
  const text = "ü🙂 long text ".repeat(20_000) + "\ud800 lone surrogate";
  const change: DocChange = { id: "big", doc: doc(text, { k: "v" }), previousParts: 0 };
  const mutations = changeMutations("idx", change);
  assert.ok(mutations.length > 4);
  await kv.atomic().mutate(...mutations).commit();
  const read = await readDocs(kv, "idx", ["big"]);
  assert.equal(read.length, 1);
  const [id, stored] = read[0]!;
  assert.equal(id, "big");
  assert.equal(stored.text, text);
  assert.deepEqual(stored.passages, change.doc!.passages);
  const heads = await readDocHeads(kv, "idx", ["big", "missing"]);
  assert.deepEqual([...heads.keys()], ["big"]);
});

Deno.test("a replaced doc with fewer parts leaves none of its old parts behind", async () => {
  using kv = await Deno.openKv(":memory:");
  await kv.atomic().mutate(...changeMutations("idx", { id: "d", doc: doc("x".repeat(100_000)), previousParts: 0 }))
    .commit();
  const parts = (await readDocHeads(kv, "idx", ["d"])).get("d")!.parts;
  assert.ok(parts > 1);
  await kv.atomic().mutate(...changeMutations("idx", { id: "d", doc: doc("short"), previousParts: parts })).commit();
  assert.equal(await countKeys(kv, ["docs", "idx", "d"]), 1);
  const listed = [];
  for await (const [id, stored] of listDocs(kv, "idx")) listed.push([id, stored.text]);
  assert.deepEqual(listed, [["d", "short"]]);
  await kv.atomic().mutate(...changeMutations("idx", { id: "d", doc: null, previousParts: 1 })).commit();
  assert.equal(await countKeys(kv, ["docs", "idx"]), 0);
});

Deno.test("the change codec round-trips ids, texts, metadata, deletions and float32 vectors", () => {
  const changes: DocChange[] = [
    { id: "ä-1", doc: doc("hello", { nested: { list: [1, "two", null] } }), previousParts: 3 },
    { id: "gone", doc: null, previousParts: 2 },
    { id: "", doc: doc(""), previousParts: 0 },
  ];
  const bytes = encodeDocChanges(changes);
  assert.deepEqual(decodeDocChanges(bytes), changes);
  const vectorBytes = 8 * 4;
  assert.ok(bytes.byteLength < 200 + 2 * vectorBytes, "vectors are stored as 4-byte floats, once");
});

Deno.test("batches stay within the mutation and byte limits of one commit", () => {
  const value = new Uint8Array(MAX_CHUNK_BYTES);
  const mutations: Deno.KvMutation[] = Array.from({ length: 40 }, (_, i) => ({ type: "set", key: ["c", i], value }));
  const batches = batchMutations(mutations);
  assert.ok(batches.length >= 4);
  for (const batch of batches) assert.ok(batch.length * MAX_CHUNK_BYTES <= 800 * 1024);
  const small: Deno.KvMutation[] = Array.from({ length: 1200 }, (_, i) => ({ type: "delete", key: ["k", i] }));
  assert.ok(batchMutations(small).every((batch) => batch.length <= 1000));
});

Deno.test("a large write is staged, made visible by one commit of the record, then applied", async () => {
  using kv = await Deno.openKv(":memory:");
  const index = record();
  assert.ok(await createIndexRecord(kv, index, []));
  const entry = await kv.get<IndexRecord>(indexKey("p", "i")) as Deno.KvEntry<IndexRecord>;
  const changes = Array.from({ length: 30 }, (_, i) => ({
    id: `d${i}`,
    doc: doc(`${i}`.padEnd(50_000, "z")),
    previousParts: 0,
  }));
  const next = { ...index, revision: 2, docCount: 30 };
  assert.notEqual(await commitIndexChanges(kv, entry, changes, next), null);
  const settled = await readSettledIndex(kv, "p", "i");
  assert.equal(settled.value?.pending, undefined);
  assert.equal(settled.value?.docCount, 30);
  const staged = await countKeys(kv, ["staged"]);
  assert.ok(staged > 0, "staged chunks stay while the change log names them");
  const stored = await readDocs(kv, index.id, ["d7"]);
  assert.equal(stored[0]![1].text, changes[7]!.doc.text);
  assert.equal(await commitIndexChanges(kv, entry, changes, next), null, "a stale record is a conflict");
  assert.equal(await countKeys(kv, ["staged"]), staged, "a conflicting write leaves no staged chunks");
});

Deno.test("a pending batch left by a crash is applied by the next reader", async () => {
  using kv = await Deno.openKv(":memory:");
  const index = record();
  const changes: DocChange[] = [{ id: "a", doc: doc("after the crash"), previousParts: 0 }];
  const chunk = encodeDocChanges(changes);
  await kv.set(["staged", index.id, "batch-1", 0], chunk);
  await kv.set(indexKey("p", "i"), { ...index, docCount: 1, pending: { batchId: "batch-1", chunks: 1 } });
  const settled = await readSettledIndex(kv, "p", "i");
  assert.equal(settled.value?.pending, undefined);
  assert.equal((await readDocs(kv, index.id, ["a"]))[0]![1].text, "after the crash");
});

Deno.test("createIndexRecord refuses a taken name and leaves the loser's documents as garbage", async () => {
  using kv = await Deno.openKv(":memory:");
  assert.ok(await createIndexRecord(kv, record(), []));
  const loser = record();
  const many = Array.from({ length: 20 }, (_, i) => ({ id: `d${i}`, doc: doc("y".repeat(60_000)), previousParts: 0 }));
  assert.ok(!await createIndexRecord(kv, loser, many));
  assert.equal(await collectGarbage(kv), 1);
  assert.equal(await countKeys(kv, ["docs", loser.id]), 0);
  assert.equal(await countKeys(kv, ["trash"]), 0);
});

Deno.test("snapshots swap by pointer, never go back, drop old versions, and leave nothing once collected", async () => {
  using kv = await Deno.openKv(":memory:");
  const index = record();
  assert.ok(await createIndexRecord(kv, index, [{ id: "a", doc: doc("alpha"), previousParts: 0 }]));
  const bytes = Uint8Array.from({ length: 150_000 }, (_, i) => i % 251);
  assert.ok(await writeSnapshot(kv, index.id, { revision: 1, pieces: [bytes] }));
  assert.ok(await writeSnapshot(kv, index.id, { revision: 2, pieces: [bytes.subarray(7)] }));
  assert.equal(await countKeys(kv, ["snapshot_chunks", index.id]), 3, "the first version was collected");
  assert.deepEqual(await readWholeSnapshot(kv, index.id), { revision: 2, bytes: bytes.subarray(7) });
  assert.ok(!await writeSnapshot(kv, index.id, { revision: 1, pieces: [bytes] }), "an older snapshot is refused");
  assert.equal(await countKeys(kv, ["snapshot_chunks", index.id]), 3, "and leaves nothing behind");

  const entry = await kv.get<IndexRecord>(indexKey("p", "i")) as Deno.KvEntry<IndexRecord>;
  const next = { ...entry.value, revision: 2 };
  assert.notEqual(await commitIndexChanges(kv, entry, [{ id: "b", doc: doc("beta"), previousParts: 0 }], next), null);
  assert.ok(await deleteIndexRecord(kv, await kv.get<IndexRecord>(indexKey("p", "i")) as Deno.KvEntry<IndexRecord>, 0));
  assert.ok(!await writeSnapshot(kv, index.id, { revision: 3, pieces: [bytes] }), "a deleted index gets no snapshot");
  await collectGarbage(kv);
  for (const prefix of [["docs"], ["log"], ["snapshot"], ["snapshot_chunks"], ["staged"], ["trash"]]) {
    assert.equal(await countKeys(kv, prefix), 0, `nothing left under ${prefix}`);
  }

  // A writer that was still at work when the index was collected, and was killed before it cleaned up.
  await takeSnapshotLease(kv, index.id, "late-writer", { ms: 60_000 });
  await kv.set(["snapshot_chunks", index.id, newTimedId(), 0], new Uint8Array(8));
  await writeSnapshot(kv, index.id, { revision: 4, pieces: [bytes] });
  await collectGarbage(kv);
  assert.ok(await countKeys(kv, ["snapshot_chunks", index.id]) > 0, "a young stray version may be on its way");
  await collectGarbage(kv, Date.now() + 2 * ABANDONED_AFTER_MS);
  for (const prefix of [["snapshot"], ["snapshot_chunks"]]) {
    assert.equal(await countKeys(kv, prefix), 0, `a late writer leaves nothing under ${prefix}`);
  }
});

Deno.test("a snapshot stored from pieces of any size reads back whole; one whose pieces fail leaves nothing", async () => {
  using kv = await Deno.openKv(":memory:");
  const index = record();
  assert.ok(await createIndexRecord(kv, index, []));
  const bytes = Uint8Array.from({ length: 1_000_003 }, (_, i) => (i * 7) % 253);
  const sizes = [1, 61_439, 61_441, 3, 200_000, 0, 5];
  async function* pieces() {
    let at = 0;
    for (let i = 0; at < bytes.byteLength; i++) {
      const size = sizes[i % sizes.length]!;
      // Each piece in a buffer that is overwritten once the next one is asked for.
      const piece = bytes.slice(at, at + size);
      yield piece;
      piece.fill(0);
      at += size;
    }
  }
  const pointer = await writeSnapshot(kv, index.id, { revision: 1, pieces: pieces() });
  assert.equal(pointer?.bytes, bytes.byteLength);
  assert.equal(pointer?.chunks, Math.ceil(bytes.byteLength / MAX_CHUNK_BYTES));
  assert.deepEqual(await readWholeSnapshot(kv, index.id), { revision: 1, bytes });
  // A chunk gone from the middle or the end (a version being deleted) is never read past.
  for (const seq of [3, pointer!.chunks - 1]) {
    const key = ["snapshot_chunks", index.id, pointer!.versionId, seq];
    const chunk = (await kv.get<Uint8Array>(key)).value!;
    await kv.delete(key);
    await assert.rejects(readWholeSnapshot(kv, index.id), /missing chunks/);
    await kv.set(key, chunk);
  }
  assert.deepEqual(await readWholeSnapshot(kv, index.id), { revision: 1, bytes });

  async function* failing() {
    yield* pieces();
    throw new Error("encoding failed");
  }
  await assert.rejects(writeSnapshot(kv, index.id, { revision: 2, pieces: failing() }), /encoding failed/);
  assert.equal(await countKeys(kv, ["snapshot_chunks", index.id]), pointer?.chunks, "only the first version's chunks");
  assert.equal((await readWholeSnapshot(kv, index.id))?.revision, 1);
});

Deno.test("a snapshot write collects versions abandoned over an hour ago, and only those", async () => {
  using kv = await Deno.openKv(":memory:");
  const index = record();
  assert.ok(await createIndexRecord(kv, index, []));
  const old = newTimedId(Date.now() - 2 * ABANDONED_AFTER_MS);
  const recent = newTimedId();
  for (const versionId of [old, recent]) await kv.set(["snapshot_chunks", index.id, versionId, 0], new Uint8Array(8));
  assert.ok(await writeSnapshot(kv, index.id, { revision: 1, pieces: [new Uint8Array(100)] }));
  const versions = new Set<unknown>();
  for await (const entry of kv.list({ prefix: ["snapshot_chunks", index.id] })) versions.add(entry.key[2]);
  assert.ok(!versions.has(old), "the abandoned version is gone");
  assert.ok(versions.has(recent), "a version that may still be on its way stays");
  assert.equal(versions.size, 2);
});

Deno.test("garbage collection removes what killed writers left in a live index, and only that", async () => {
  using kv = await Deno.openKv(":memory:");
  const index = record();
  assert.ok(await createIndexRecord(kv, index, []));
  const entry = await kv.get<IndexRecord>(indexKey("p", "i")) as Deno.KvEntry<IndexRecord>;
  const large = Array.from({ length: 30 }, (_, i) => ({ id: `d${i}`, doc: doc("z".repeat(30_000)), previousParts: 0 }));
  assert.notEqual(await commitIndexChanges(kv, entry, large, { ...index, revision: 2, docCount: 30 }), null);
  const docKeys = await countKeys(kv, ["docs", index.id]);
  const old = newTimedId(Date.now() - 2 * ABANDONED_AFTER_MS);
  const young = newTimedId();
  for (const id of [old, young]) {
    await kv.set(["staged", index.id, id, 0], new Uint8Array(8));
    await kv.set(["jobs", index.id, id, 0], new Uint8Array(8));
  }
  await kv.set(["staged", index.id, "plain-uuid-of-an-old-version", 0], new Uint8Array(8));
  const keys = async (space: string) => {
    const found = new Set<string>();
    for await (const { key } of kv.list({ prefix: [space, index.id] })) found.add(key[2] as string);
    return found;
  };
  const logged = [...await keys("staged")].filter((id) => id !== old && id !== young && !id.startsWith("p"));
  assert.equal(logged.length, 1, "the large write's batch, named by the change log");

  await collectGarbage(kv);
  assert.deepEqual(await keys("staged"), new Set([logged[0], young]), "abandoned, unnamed batches are gone");
  assert.deepEqual(await keys("jobs"), new Set([young]), "so are abandoned job documents; young ones stay");

  // A snapshot whose writer died before it truncated the log.
  assert.ok(await writeSnapshot(kv, index.id, { revision: 2, pieces: [new Uint8Array(10)] }));
  await collectGarbage(kv, Date.now() + 2 * ABANDONED_AFTER_MS);
  assert.equal(await countKeys(kv, ["log", index.id]), 0, "log entries a snapshot covers are gone");
  assert.equal(await countKeys(kv, ["staged", index.id]), 0, "with the batches they named");
  assert.equal(await countKeys(kv, ["jobs", index.id]), 0);
  assert.equal(await countKeys(kv, ["docs", index.id]), docKeys, "documents stay");
  assert.equal(await countKeys(kv, ["snapshot_chunks", index.id]), 1, "the current snapshot stays");
});

Deno.test("garbage collection removes abandoned job documents of an index whose record was never committed", async () => {
  using kv = await Deno.openKv(":memory:");
  const live = record();
  assert.ok(await createIndexRecord(kv, live, []));
  const old = newTimedId(Date.now() - 2 * ABANDONED_AFTER_MS);
  const young = newTimedId();
  // A wait: false createIndex killed between staging its documents and committing its record.
  await kv.set(["jobs", "never-committed", old, 0], new Uint8Array(8));
  await kv.set(["jobs", "still-staging", young, 0], new Uint8Array(8));
  await collectGarbage(kv);
  assert.equal(await countKeys(kv, ["jobs", "never-committed"]), 0, "abandoned: collected");
  assert.equal(await countKeys(kv, ["jobs", "still-staging"]), 1, "young: may still be on its way");
});

Deno.test("every write logs its changes, inline or as a staged batch, until a snapshot covers them", async () => {
  using kv = await Deno.openKv(":memory:");
  const index = record();
  assert.ok(await createIndexRecord(kv, index, []));
  const small = [{ id: "a", doc: doc("alpha", { k: 1 }), previousParts: 0 }];
  const large = Array.from(
    { length: 30 },
    (_, i) => ({ id: `big${i}`, doc: doc("z".repeat(30_000)), previousParts: 0 }),
  );
  const removal = [{ id: "a", doc: null, previousParts: 1 }];
  for (const changes of [small, large, removal]) {
    const entry = await readSettledIndex(kv, "p", "i") as Deno.KvEntry<IndexRecord>;
    const logBytes = await commitIndexChanges(kv, entry, changes, {
      ...entry.value,
      revision: entry.value.revision + 1,
    });
    assert.ok(logBytes !== null && logBytes > 0);
  }
  assert.deepEqual((await kv.get(logKey(index.id, 2))).value, { bytes: encodeDocChanges(small) });
  assert.ok("batchId" in (await kv.get<LogEntry>(logKey(index.id, 3))).value!, "the large write names its batch");
  assert.deepEqual(await readLogTail(kv, index.id, 1, 4), {
    changes: [small, large, removal],
    bytes: [small, large, removal].reduce((sum, changes) => sum + encodeDocChanges(changes).byteLength, 0),
  });
  assert.equal(await readLogTail(kv, index.id, 0, 4), null, "revision 1 (the create) has no entry: a gap");
  assert.equal((await readLogTail(kv, index.id, 4, 4))?.changes.length, 0);
  await truncateLog(kv, index.id, 3);
  assert.equal(await countKeys(kv, ["log", index.id]), 1);
  assert.equal(await countKeys(kv, ["staged", index.id]), 0, "the covered batch went with its entry");
  assert.deepEqual((await readLogTail(kv, index.id, 3, 4))?.changes, [removal]);
});
