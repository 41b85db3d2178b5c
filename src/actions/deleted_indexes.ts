/** `restoreIndex` and `listDeletedIndexes`: undo for `deleteIndex` within `UNDO_WINDOW`. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import type { DeletedIndexView, IndexView } from "../api/response_schemas.ts";
import { ApiError } from "../api/api_error.ts";
import { allowsIndex, type KeyScope } from "../keys/key_scope.ts";
import { listDeletedIndexes as listDeleted, restoreDeletedIndex } from "../storage/deleted_indexes.ts";
import { indexKey } from "../storage/kv_keys.ts";
import { indexView } from "./index_view.ts";

/**
 * Brings back the latest deleted index of the name (or the one of `indexId`), as it was; 404 when there is none, 409
 * when the name is taken.
 */
export async function restoreIndex(ctx: ServiceContext, request: RequestOf<"restoreIndex">): Promise<IndexView> {
  const { projectId, indexName, indexId } = request;
  const restored = await restoreDeletedIndex(ctx.kv, projectId, { name: indexName, indexId });
  if (restored === "missing") {
    throw new ApiError(404, `No deleted index "${indexName}" to restore: none was deleted within UNDO_WINDOW`);
  }
  if (restored === "taken") {
    throw new ApiError(409, `Cannot restore index "${indexName}": an index or alias has that name now`);
  }
  ctx.records.invalidate(indexKey(projectId, indexName));
  return await indexView(ctx, restored);
}

/** The deleted indexes within the caller's scope that can still be restored, each with when it expires. */
export async function listDeletedIndexes(
  ctx: ServiceContext,
  request: RequestOf<"listDeletedIndexes">,
  scope: Pick<KeyScope, "indexes">,
): Promise<DeletedIndexView[]> {
  const deleted = (await listDeleted(ctx.kv, request.projectId))
    .filter(({ record }) => allowsIndex(scope, record.name))
    .sort((a, b) => a.record.name.localeCompare(b.record.name) || b.deletedAt.localeCompare(a.deletedAt));
  return await Promise.all(
    deleted.map(async ({ record, deletedAt, expiresAt }) => ({
      ...await indexView(ctx, record),
      deletedAt,
      expiresAt,
    })),
  );
}
