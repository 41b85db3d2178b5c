/**
 * An independent audit of a quire store: every key must belong to a live index and be named by what reads it. Used
 * after garbage collection, which must leave no orphan behind.
 */
import type { DeletedIndex, IndexRecord } from "../src/storage/index_records.ts";
import type { SnapshotPointer } from "../src/storage/snapshot_store.ts";

/** Key spaces of projects and of the store as a whole, not of an index: their keys name no index id. */
const PROJECT_SPACES = [
  "projects",
  "indexes",
  "deleted_indexes",
  "aliases",
  "keys",
  "key_hashes",
  "project_key_hashes",
  "public_key_projects",
  "key_usage",
  "rate",
  "idempotency",
  "webhook_secrets",
  "webhook_outbox",
  "backup",
  "store_format",
  "analytics",
  "analytics_chunks",
];

/** Describes each key that nothing live points to, and each index whose `docCount` differs from its documents. */
export async function findOrphans(kv: Deno.Kv): Promise<string[]> {
  const entries = await Array.fromAsync(kv.list<unknown>({ prefix: [] }));
  const records = new Map<string, IndexRecord>();
  const pointers = new Map<string, SnapshotPointer>();
  const namedBatches = new Set<string>();
  const kept = new Set<string>();
  for (const { key, value } of entries) {
    if (key[0] === "indexes") records.set((value as IndexRecord).id, value as IndexRecord);
    // A deleted index within its undo window keeps its data whole, as it was, until the window ends.
    if (key[0] === "deleted_indexes") {
      const { record } = value as DeletedIndex;
      records.set(record.id, record);
      kept.add(record.id);
    }
    // A snapshot's lease sorts after its pointer, under the same index id: a killed writer may have left one.
    if (key[0] === "snapshot" && key.length === 2) pointers.set(key[1] as string, value as SnapshotPointer);
    if (key[0] === "log" && Object.hasOwn(value as object, "batchId")) {
      namedBatches.add(`${String(key[1])}/${(value as { batchId: string }).batchId}`);
    }
  }
  for (const record of records.values()) {
    if (record.pending !== undefined) namedBatches.add(`${record.id}/${record.pending.batchId}`);
  }

  const orphans: string[] = [];
  const docCounts = new Map<string, number>();
  for (const { key } of entries) {
    const [space, id, sub, part] = key as [string, string, unknown, unknown];
    const record = records.get(id);
    if (PROJECT_SPACES.includes(space)) continue;
    if (space === "docs" && record !== undefined && part === 0) docCounts.set(id, (docCounts.get(id) ?? 0) + 1);
    if (record === undefined || !isNamed(record, space, sub)) orphans.push(JSON.stringify(key));
  }
  for (const record of records.values()) {
    const stored = docCounts.get(record.id) ?? 0;
    if (stored !== record.docCount) orphans.push(`index "${record.name}": docCount ${record.docCount}, ${stored} docs`);
  }
  return orphans;

  /** Whether the key `[space, record.id, sub, …]` is read by the live index `record`. */
  function isNamed(record: IndexRecord, space: string, sub: unknown): boolean {
    if (kept.has(record.id)) return true;
    const pointer = pointers.get(record.id);
    switch (space) {
      case "docs":
      case "snapshot":
        return true;
      case "snapshot_chunks":
        return pointer?.versionId === sub;
      case "log":
        // Entries a snapshot covers are dead, unless a pending batch still needs its entry.
        return (sub as number) > (pointer?.revision ?? 0) || record.pending !== undefined;
      case "staged":
        return namedBatches.has(`${record.id}/${sub}`);
      case "jobs":
        return record.job?.state === "running" && record.job.id === sub;
      case "index_settings":
        return record.settings?.id === sub;
      default:
        return false;
    }
  }
}
