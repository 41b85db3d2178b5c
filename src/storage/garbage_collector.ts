/** Removes the data of index ids that no record points to any more. */
import type { TrashMarker } from "./index_records.ts";
import { indexDataPrefixes, trashKey, trashPrefix } from "./kv_keys.ts";
import { deleteTrees } from "./kv_batches.ts";

/** How long an index may take to build before its half-written data counts as abandoned. */
const BUILD_TIMEOUT_MS = 60 * 60 * 1000;

/** Deletes the data of one trashed index id, then its marker. */
export async function collectIndexData(kv: Deno.Kv, indexId: string): Promise<void> {
  await deleteTrees(kv, indexDataPrefixes(indexId));
  await kv.delete(trashKey(indexId));
}

/** Collects every deleted index and every build abandoned for longer than the build timeout; returns their count. */
export async function collectGarbage(kv: Deno.Kv, now = Date.now()): Promise<number> {
  let collected = 0;
  for await (const entry of kv.list<TrashMarker>({ prefix: trashPrefix() })) {
    const marker = entry.value;
    if (marker.reason === "building" && now - marker.since < BUILD_TIMEOUT_MS) continue;
    await collectIndexData(kv, entry.key[1] as string);
    collected++;
  }
  return collected;
}
