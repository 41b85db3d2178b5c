/** `deleteIndex`: removes the record at once; its documents and snapshots are collected in the background. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import { deleteIndexRecord } from "../storage/index_records.ts";
import { collectIndexData } from "../storage/garbage_collector.ts";
import { writeToIndex } from "../writes/index_write.ts";

/** Deletes the index; 404 if unknown. */
export async function deleteIndex(ctx: ServiceContext, request: RequestOf<"deleteIndex">): Promise<true> {
  return await writeToIndex(ctx, request, async (entry) => {
    if (!await deleteIndexRecord(ctx.kv, entry)) return undefined;
    const indexId = entry.value.id;
    ctx.records.invalidate(entry.key);
    ctx.indexStates.drop(indexId);
    ctx.background.run(`collect index ${indexId}`, () => collectIndexData(ctx.kv, indexId));
    return true as const;
  });
}
