/**
 * The per-index change log: for each revision since the last snapshot, the document changes of the write that made
 * it. A small write's changes sit inline in the entry, committed atomically with the write; a large write's entry
 * names the staged batch that carried them. Loading replays the log on top of the snapshot, so that a write never
 * has to rewrite the snapshot.
 */
import { decodeDocChanges, type DocChange } from "./doc_change_codec.ts";
import { logKey, logPrefix, stagedBatchPrefix, stagedChunkKey } from "./kv_keys.ts";
import { commitInBatches, deleteTrees, readChunks } from "./kv_batches.ts";

/**
 * How long the change log stays readable after a snapshot covers it, so that a process whose cached state was current
 * within this window catches up by replaying the log instead of reloading the snapshot.
 */
export const LOG_RETENTION_MS = 10 * 60 * 1000;

/** One revision's changes: encoded inline, or in the chunks of a staged batch. */
export type LogEntry = { bytes: Uint8Array } | { batchId: string; chunks: number };

/** The changes of the revisions after a given one, in order, and their encoded size. */
export interface LogTail {
  changes: DocChange[][];
  bytes: number;
}

/** The mutation that records `entry` as revision `revision` of an index. */
export function logMutation(indexId: string, revision: number, entry: LogEntry): Deno.KvMutation {
  return { type: "set", key: logKey(indexId, revision), value: entry };
}

/**
 * Reads the changes of revisions `from + 1` to `to`; null when any of them is missing (e.g. a revision from before
 * the log existed), so that the caller rebuilds from the document records instead.
 */
export async function readLogTail(kv: Deno.Kv, indexId: string, from: number, to: number): Promise<LogTail | null> {
  const tail: LogTail = { changes: [], bytes: 0 };
  let expected = from + 1;
  const entries = kv.list<LogEntry>({ start: logKey(indexId, from + 1), end: logKey(indexId, to + 1) });
  for await (const entry of entries) {
    if (entry.key[2] !== expected) return null;
    const bytes = await entryBytes(kv, indexId, entry.value);
    if (bytes === null) return null;
    tail.changes.push(decodeDocChanges(bytes));
    tail.bytes += bytes.byteLength;
    expected++;
  }
  return expected === to + 1 ? tail : null;
}

/** Deletes the log entries up to `revision`, which a snapshot now covers, with the staged batches they name. */
export async function truncateLog(kv: Deno.Kv, indexId: string, revision: number): Promise<void> {
  const deletions: Deno.KvMutation[] = [];
  const batches: Deno.KvKey[] = [];
  for await (const entry of kv.list<LogEntry>({ prefix: logPrefix(indexId), end: logKey(indexId, revision + 1) })) {
    deletions.push({ type: "delete", key: entry.key });
    if ("batchId" in entry.value) batches.push(stagedBatchPrefix(indexId, entry.value.batchId));
  }
  await commitInBatches(kv, deletions);
  await deleteTrees(kv, batches);
}

async function entryBytes(kv: Deno.Kv, indexId: string, entry: LogEntry): Promise<Uint8Array | null> {
  if ("bytes" in entry) return entry.bytes;
  return await readChunks(kv, entry.chunks, (seq) => stagedChunkKey(indexId, entry.batchId, seq));
}
