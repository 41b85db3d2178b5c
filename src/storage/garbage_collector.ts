/**
 * Removes data that nothing points to any more: the data of deleted indexes and abandoned builds (found by their
 * trash markers), and, inside live indexes, what a writer killed half-way left behind: staged batches and queued-job
 * documents that no record or log entry names, log entries a snapshot already covers, and snapshot versions that
 * were never swapped in.
 */
import type { IndexRecord, TrashMarker } from "./index_records.ts";
import { LOG_RETENTION_MS, type LogEntry, truncateLog } from "./change_log.ts";
import {
  indexDataPrefixes,
  indexesPrefix,
  jobPrefix,
  logPrefix,
  settingsPrefix,
  snapshotChunksPrefix,
  snapshotPointerKey,
  snapshotPrefix,
  stagedBatchPrefix,
  trashKey,
  trashPrefix,
} from "./kv_keys.ts";
import { deleteTrees, firstOfGroups } from "./kv_batches.ts";
import { expireDeletedIndexes, keptDeletedIds } from "./deleted_indexes.ts";
import {
  deleteAbandonedVersions,
  readSnapshotPointer,
  type SnapshotLease,
  type SnapshotPointer,
  truncatableRevision,
} from "./snapshot_store.ts";
import { ABANDONED_AFTER_MS, isAbandoned, timeOfId } from "./timed_id.ts";

/** Deletes the data of one trashed index id, then its marker. */
export async function collectIndexData(kv: Deno.Kv, indexId: string): Promise<void> {
  await deleteTrees(kv, indexDataPrefixes(indexId));
  await kv.delete(trashKey(indexId));
}

/**
 * Collects every deleted index (once its undo window has ended), every build abandoned for longer than {@link ABANDONED_AFTER_MS}, and the abandoned
 * leftovers inside live indexes; returns the number of index ids whose data went away whole.
 */
export async function collectGarbage(kv: Deno.Kv, now = Date.now()): Promise<number> {
  let collected = 0;
  await expireDeletedIndexes(kv, now);
  for await (const entry of kv.list<TrashMarker>({ prefix: trashPrefix() })) {
    const marker = entry.value;
    if (marker.reason === "building" && now - marker.since < ABANDONED_AFTER_MS) continue;
    await collectIndexData(kv, entry.key[1] as string);
    collected++;
  }
  // A deleted index within its undo window keeps its data, snapshot and all, as a live one does.
  const liveIds = await keptDeletedIds(kv);
  for await (const entry of kv.list<IndexRecord>({ prefix: indexesPrefix() })) {
    liveIds.add(entry.value.id);
    await collectLeftovers(kv, entry.value, now);
  }
  await collectStrays(kv, liveIds, now);
  return collected;
}

/**
 * Deletes the abandoned data of index ids that no record names and no trash marker covers any more.
 * - Job documents: a `wait: false` createIndex stages its documents under a fresh index id before the commit that
 *   creates the record, and a process killed in between leaves them to nobody.
 * - Snapshots: a snapshot writer that was still writing when its index was deleted and collected leaves its chunks,
 *   its lease and even a pointer behind.
 */
async function collectStrays(kv: Deno.Kv, liveIds: ReadonlySet<string>, now: number): Promise<void> {
  for (const space of [jobPrefix(), snapshotChunksPrefix(), settingsPrefix()]) {
    for await (const { key } of firstOfGroups(kv, space)) {
      const indexId = key[1] as string;
      if (!liveIds.has(indexId)) await deleteUnnamed(kv, [...space, indexId], () => false, now);
    }
  }
  for await (const { key, value } of firstOfGroups<SnapshotPointer | SnapshotLease>(kv, snapshotPrefix())) {
    const indexId = key[1] as string;
    const since = "versionId" in value ? timeOfId(value.versionId) : value.until;
    if (!liveIds.has(indexId) && now - since >= ABANDONED_AFTER_MS) {
      await deleteTrees(kv, [snapshotPointerKey(indexId)]);
    }
  }
}

/** Deletes what killed writers left inside one live index. */
async function collectLeftovers(kv: Deno.Kv, record: IndexRecord, now: number): Promise<void> {
  const pointer = await readSnapshotPointer(kv, record.id);
  // A pending batch is applied from its staged chunks, so its log entry stays until the batch is applied.
  const covered = Math.min(
    truncatableRevision(pointer, now, LOG_RETENTION_MS),
    record.pending === undefined ? Infinity : record.revision - 1,
  );
  if (covered > 0) await truncateLog(kv, record.id, covered);
  await deleteAbandonedVersions(kv, record.id, pointer?.versionId, now);

  const namedBatches = new Set<string>();
  if (record.pending !== undefined) namedBatches.add(record.pending.batchId);
  for await (const entry of kv.list<LogEntry>({ prefix: logPrefix(record.id) })) {
    if ("batchId" in entry.value) namedBatches.add(entry.value.batchId);
  }
  const runningJob = record.job?.state === "running" ? record.job.id : undefined;
  await deleteUnnamed(kv, stagedBatchPrefix(record.id), (batchId) => namedBatches.has(batchId), now);
  await deleteUnnamed(kv, jobPrefix(record.id), (jobId) => jobId === runningJob, now);
  // Settings versions that a change wrote but lost its commit, or whose deletion after a newer one died.
  await deleteUnnamed(kv, settingsPrefix(record.id), (settingsId) => settingsId === record.settings?.id, now);
}

/** Deletes the abandoned groups under `prefix` (keyed by the id after it) that `isNamed` does not keep. */
async function deleteUnnamed(
  kv: Deno.Kv,
  prefix: Deno.KvKey,
  isNamed: (id: string) => boolean,
  now: number,
): Promise<void> {
  const unnamed = new Set<string>();
  for await (const { key } of firstOfGroups(kv, prefix)) {
    const id = key[prefix.length] as string;
    if (!isNamed(id) && isAbandoned(id, now)) unnamed.add(id);
  }
  await deleteTrees(kv, [...unnamed].map((id) => [...prefix, id]));
}
