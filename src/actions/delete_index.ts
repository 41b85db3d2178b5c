/** `deleteIndex`: removes the record at once; its documents and snapshots are collected in the background. */
import { indexLockKey, type ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import { deleteIndexRecord, type IndexRecord } from "../storage/index_records.ts";
import { collectIndexData } from "../storage/garbage_collector.ts";
import { indexKey } from "../storage/kv_keys.ts";
import { indexNotFound } from "./index_not_found.ts";
import { retryOnConflict } from "./conflict_retries.ts";

/** Deletes the index; 404 if unknown. */
export async function deleteIndex(ctx: ServiceContext, request: RequestOf<"deleteIndex">): Promise<true> {
  const { projectId, indexName } = request;
  const target = { indexName, metrics: ctx.metrics };
  return await ctx.indexLocks.run(indexLockKey(projectId, indexName), () =>
    retryOnConflict(target, async () => {
      const entry = await ctx.kv.get<IndexRecord>(indexKey(projectId, indexName));
      if (entry.value === null) throw indexNotFound(indexName);
      if (!await deleteIndexRecord(ctx.kv, entry as Deno.KvEntry<IndexRecord>)) return undefined;
      const indexId = entry.value.id;
      ctx.records.invalidate(entry.key);
      ctx.searchIndexes.drop(indexId);
      ctx.snapshots.drop(indexId);
      ctx.background.run(`collect index ${indexId}`, () => collectIndexData(ctx.kv, indexId));
      return true as const;
    }));
}
