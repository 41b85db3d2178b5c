/**
 * `deleteIndex`: removes the record at once. Within `UNDO_WINDOW` its data stays for `restoreIndex`; without one, its
 * documents, snapshots and search analytics are collected in the background. 409 while an alias points at it.
 */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import { ApiError } from "../api/api_error.ts";
import { deleteIndexRecord } from "../storage/index_records.ts";
import { listAliasRecords } from "../storage/alias_records.ts";
import { collectIndexData } from "../storage/garbage_collector.ts";
import { analyticsIndexOf, deleteIndexAnalytics } from "../storage/analytics_records.ts";
import { writeToIndex } from "../writes/index_write.ts";

/** Deletes the index; 404 if unknown, 409 naming an alias that points at it. */
export async function deleteIndex(ctx: ServiceContext, request: RequestOf<"deleteIndex">): Promise<true> {
  return await writeToIndex(ctx, { ...request, notWhileReembedding: true }, async (entry) => {
    // Setting an alias rewrites the record, so an alias set after this read fails the delete's check.
    const alias = (await listAliasRecords(ctx.kv, request.projectId))
      .find((alias) => alias.indexName === request.indexName);
    if (alias !== undefined) {
      throw new ApiError(
        409,
        `Index "${request.indexName}" is the target of alias "${alias.alias}": point the alias elsewhere or delete it`,
      );
    }
    if (!await deleteIndexRecord(ctx.kv, entry, ctx.undoWindowMs)) return undefined;
    const indexId = entry.value.id;
    ctx.records.invalidate(entry.key);
    ctx.indexStates.drop(indexId);
    if (ctx.undoWindowMs === 0) {
      ctx.background.run(`collect index ${indexId}`, async () => {
        await collectIndexData(ctx.kv, indexId);
        await deleteIndexAnalytics(ctx.kv, analyticsIndexOf(entry.value));
      });
    }
    return true as const;
  });
}
