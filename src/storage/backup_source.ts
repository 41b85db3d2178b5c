/**
 * What a backup reads from the store: durable records as they are, and a consistent copy of each index's documents.
 * A listing of documents is no snapshot (it reads in batches while writes land), so an index is copied between two
 * reads of its record, and the writes that landed in between are replayed from the change log: each change sets or
 * deletes a whole document, so the copy with the last change of each document it names applied is the index at the
 * second read.
 */
import type { IndexRecord } from "./index_records.ts";
import { backedUpRecordPrefixes, deletedIndexesPrefix, docsPrefix, indexesPrefix, storeFormatKey } from "./kv_keys.ts";
import { changeMutations } from "./doc_records.ts";
import { readLogTail } from "./change_log.ts";

/** Entries of a listing per read. */
const LIST_BATCH = 500;

/** A key and its value as stored. */
export interface StoredEntry {
  key: Deno.KvKey;
  value: unknown;
}

/** Where an index's record lives: under its name (a live index), or kept for undo after `deleteIndex`. */
export interface IndexSource {
  key: Deno.KvKey;
  /** The index record inside the value stored at {@link key}. */
  recordOf(value: unknown): IndexRecord | null;
}

/** The store's format marker (see `store_format.ts`); null in a store that has none (format 1, or a new store). */
export async function readStoreFormat(kv: Deno.Kv): Promise<number | null> {
  return (await kv.get<number>(storeFormatKey())).value;
}

/** The durable records that a backup copies as they are, prefix by prefix, in key order. */
export async function* listBackedUpRecords(kv: Deno.Kv): AsyncGenerator<StoredEntry> {
  for (const prefix of backedUpRecordPrefixes()) {
    for await (const { key, value } of kv.list({ prefix }, { batchSize: LIST_BATCH })) yield { key, value };
  }
}

/**
 * Every index to copy: live ones by name, then deleted ones kept for undo; a kept value with no index record in it
 * comes as an entry to copy as it is.
 */
export async function* listIndexSources(kv: Deno.Kv): AsyncGenerator<IndexSource | StoredEntry> {
  for await (const { key } of kv.list<IndexRecord>({ prefix: indexesPrefix() }, { batchSize: LIST_BATCH })) {
    yield { key, recordOf: (value) => value as IndexRecord | null };
  }
  for await (const { key, value } of kv.list({ prefix: deletedIndexesPrefix() }, { batchSize: LIST_BATCH })) {
    if (keptRecordOf(value) === null) yield { key, value };
    else yield { key, recordOf: keptRecordOf };
  }
}

/** The index record inside a deleted index kept for undo (`{record, …}`), or null. */
function keptRecordOf(value: unknown): IndexRecord | null {
  const record = (value as { record?: { id?: unknown } } | null)?.record;
  return typeof record?.id === "string" ? record as IndexRecord : null;
}

/** The outcome of one try at copying an index. */
export type IndexCopy =
  | {
    kind: "copied";
    /** The entry of the record, at the revision the copy shows. */
    entry: StoredEntry;
    record: IndexRecord;
    /** Documents that changed while they were copied, by id: their parts at that revision, none when deleted. */
    replaced: Map<string, StoredEntry[]>;
  }
  /** The record went away. */
  | { kind: "gone" }
  /** The index moved to another id (re-embedded), or the log no longer covers the writes: copy it again. */
  | { kind: "changed" };

/**
 * One try at a consistent copy of an index: hands the entries of its document parts to `onEntries` batch by batch
 * (awaited, with `pace` after each), then says what to replace in them.
 */
export async function copyIndexDocs(
  kv: Deno.Kv,
  source: IndexSource,
  onEntries: (entries: StoredEntry[]) => Promise<void>,
  pace?: () => Promise<void>,
): Promise<IndexCopy> {
  const before = source.recordOf((await kv.get(source.key)).value);
  if (before === null) return { kind: "gone" };
  // A record that names a pending batch shows a revision whose documents may be only partly written: replay it too.
  const from = before.pending === undefined ? before.revision : before.revision - 1;
  let batch: StoredEntry[] = [];
  for await (const { key, value } of kv.list({ prefix: docsPrefix(before.id) }, { batchSize: LIST_BATCH })) {
    batch.push({ key, value });
    if (batch.length === LIST_BATCH) {
      await onEntries(batch);
      batch = [];
      await pace?.();
    }
  }
  if (batch.length > 0) await onEntries(batch);
  const after = await kv.get(source.key);
  const record = source.recordOf(after.value);
  if (record === null) return { kind: "gone" };
  if (record.id !== before.id) return { kind: "changed" };
  const replaced = new Map<string, StoredEntry[]>();
  if (record.revision > from) {
    const tail = await readLogTail(kv, record.id, from, record.revision);
    if (tail === null) return { kind: "changed" };
    for (const change of tail.changes.flat()) {
      const parts = changeMutations(record.id, change)
        .flatMap((mutation) => mutation.type === "set" ? [{ key: mutation.key, value: mutation.value }] : []);
      replaced.set(change.id, parts);
    }
  }
  return { kind: "copied", entry: { key: after.key, value: after.value }, record, replaced };
}
