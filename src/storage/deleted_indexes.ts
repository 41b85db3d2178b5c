/**
 * Deleted indexes within their undo window: the record as it was, kept under the index's id with its data and search
 * analytics, until `restoreIndex` brings it back under its name or the window ends and the collector reclaims it.
 */
import type { DeletedIndex, IndexRecord, TrashMarker } from "./index_records.ts";
import { aliasKey, deletedIndexesPrefix, indexKey, trashKey } from "./kv_keys.ts";
import { analyticsIndexOf, deleteIndexAnalytics } from "./analytics_records.ts";

/** A project's deleted indexes that can still be restored, by id. */
export async function listDeletedIndexes(kv: Deno.Kv, projectId: string, now = Date.now()): Promise<DeletedIndex[]> {
  const deleted: DeletedIndex[] = [];
  for await (const entry of kv.list<DeletedIndex>({ prefix: deletedIndexesPrefix(projectId) })) {
    if (Date.parse(entry.value.expiresAt) > now) deleted.push(entry.value);
  }
  return deleted;
}

/**
 * Brings back the latest deleted index named `name` (or the one of `indexId`) under its name: the record, or "missing"
 * when none is within its window, or "taken" when an index or an alias has the name now.
 */
export async function restoreDeletedIndex(
  kv: Deno.Kv,
  projectId: string,
  { name, indexId }: { name: string; indexId?: string | undefined },
): Promise<IndexRecord | "missing" | "taken"> {
  for (;;) {
    let latest: Deno.KvEntry<DeletedIndex> | undefined;
    for await (const entry of kv.list<DeletedIndex>({ prefix: deletedIndexesPrefix(projectId) })) {
      const { record, deletedAt, expiresAt } = entry.value;
      if (record.name !== name || Date.parse(expiresAt) <= Date.now()) continue;
      if (indexId !== undefined && record.id !== indexId) continue;
      if (latest === undefined || deletedAt > latest.value.deletedAt) latest = entry;
    }
    if (latest === undefined) return "missing";
    const record = latest.value.record;
    const key = indexKey(projectId, name);
    const [index, alias] = await kv.getMany([key, aliasKey(projectId, name)]);
    if (index.versionstamp !== null || alias.versionstamp !== null) return "taken";
    const result = await kv.atomic().check(latest, index, alias).delete(latest.key).set(key, record).commit();
    if (result.ok) return record;
  }
}

/**
 * Moves the deleted indexes whose window has ended to the trash, for the collector, and deletes their search analytics;
 * returns their ids.
 */
export async function expireDeletedIndexes(kv: Deno.Kv, now = Date.now()): Promise<string[]> {
  const expired: string[] = [];
  for await (const entry of kv.list<DeletedIndex>({ prefix: deletedIndexesPrefix() })) {
    if (Date.parse(entry.value.expiresAt) > now) continue;
    const { record } = entry.value;
    const marker: TrashMarker = { reason: "deleted", since: now };
    const result = await kv.atomic().check(entry).delete(entry.key).set(trashKey(record.id), marker).commit();
    if (!result.ok) continue;
    expired.push(record.id);
    await deleteIndexAnalytics(kv, analyticsIndexOf(record));
  }
  return expired;
}

/** The ids of every deleted index still kept, whose data the collector must leave alone. */
export async function keptDeletedIds(kv: Deno.Kv): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const entry of kv.list<DeletedIndex>({ prefix: deletedIndexesPrefix() })) ids.add(entry.value.record.id);
  return ids;
}
