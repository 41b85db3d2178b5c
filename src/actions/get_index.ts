/** `getIndex`: one index's metadata. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import type { IndexRecord } from "../storage/index_records.ts";
import { indexKey } from "../storage/kv_keys.ts";
import type { IndexView } from "../api/response_schemas.ts";
import { indexView } from "./index_view.ts";
import { indexNotFound } from "../api/index_errors.ts";

/** The record of index `indexName`, read through the metadata cache (`METADATA_CACHE_MS`); 404 if unknown. */
export async function cachedIndexRecord(
  ctx: ServiceContext,
  projectId: string,
  indexName: string,
): Promise<IndexRecord> {
  const record = await ctx.records.get<IndexRecord>(indexKey(projectId, indexName));
  if (record === null) throw indexNotFound(indexName);
  return record;
}

/** Returns the Index object; 404 if unknown. */
export async function getIndex(ctx: ServiceContext, request: RequestOf<"getIndex">): Promise<IndexView> {
  const record = await cachedIndexRecord(ctx, request.projectId, request.indexName);
  const view = await indexView(ctx, record);
  const bytes = ctx.indexStates.bytesOf(record.id);
  if (bytes > 0) view.memoryBytes = bytes;
  return view;
}
