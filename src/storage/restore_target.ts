/**
 * What a restore writes into the store: it checks that the store is empty, writes each index's documents under a
 * build marker (so that garbage collection finds them if the restore dies), and makes each index visible by one commit
 * of its record.
 */
import type { StoredEntry } from "./backup_source.ts";
import { indexesPrefix, projectsPrefix, storeFormatKey, trashKey } from "./kv_keys.ts";
import { commitInBatches } from "./kv_batches.ts";
import { abandonBuild, startBuild } from "./index_records.ts";

/** What makes a store not empty: its first project or index, as a phrase for a message; null for an empty store. */
export async function storeContents(kv: Deno.Kv): Promise<string | null> {
  for await (const { key } of kv.list({ prefix: projectsPrefix() }, { limit: 1 })) return `project "${String(key[1])}"`;
  for await (const { key } of kv.list({ prefix: indexesPrefix() }, { limit: 1 })) {
    return `index "${String(key[2])}" of project "${String(key[1])}"`;
  }
  return null;
}

/** Marks the store as holding records of `format`, so that a start brings them forward from there. */
export async function writeStoreFormat(kv: Deno.Kv, format: number): Promise<void> {
  await kv.set(storeFormatKey(), format);
}

/** Marks the documents about to be written under `indexId` as a build, collected as garbage unless published. */
export async function startRestoredIndex(kv: Deno.Kv, indexId: string): Promise<void> {
  await startBuild(kv, indexId);
}

/** Writes entries as they are, in as many bounded commits as they need. */
export async function writeRestoredEntries(kv: Deno.Kv, entries: StoredEntry[]): Promise<void> {
  await commitInBatches(kv, entries.map(({ key, value }): Deno.KvMutation => ({ type: "set", key, value })));
}

/**
 * Makes a restored index visible: writes its record entry (under its name, or kept for undo) unless the key is taken,
 * and clears its build marker in the same commit. A taken key leaves the documents to garbage collection.
 */
export async function publishRestoredIndex(kv: Deno.Kv, indexId: string, entry: StoredEntry): Promise<boolean> {
  const result = await kv.atomic().check({ key: entry.key, versionstamp: null }).set(entry.key, entry.value)
    .delete(trashKey(indexId)).commit();
  if (!result.ok) await abandonBuild(kv, indexId);
  return result.ok;
}
