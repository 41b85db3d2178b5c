/** `setAlias`, `deleteAlias` and `listAliases`: other names of indexes, swapped atomically for blue-green rebuilds. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import { ApiError } from "../api/api_error.ts";
import { indexNotFound } from "../api/index_errors.ts";
import { allowsIndex, type KeyScope } from "../keys/key_scope.ts";
import { deleteAliasRecord, listAliasRecords, setAliasRecord } from "../storage/alias_records.ts";
import { aliasKey } from "../storage/kv_keys.ts";

/** Points an alias at an index in one atomic step; 404 for a missing index, 409 when an index has the alias's name. */
export async function setAlias(ctx: ServiceContext, request: RequestOf<"setAlias">): Promise<true> {
  const { projectId, alias, indexName } = request;
  const refusal = await setAliasRecord(ctx.kv, { projectId, alias, indexName, updatedAt: new Date().toISOString() });
  if (refusal === "missing") throw indexNotFound(indexName);
  if (refusal === "shadows") {
    throw new ApiError(409, `Alias "${alias}" would shadow the index of that name: an alias needs a name of its own`);
  }
  ctx.records.invalidate(aliasKey(projectId, alias));
  return true;
}

/** Deletes an alias; 404 when there is none. */
export async function deleteAlias(ctx: ServiceContext, request: RequestOf<"deleteAlias">): Promise<true> {
  if (!await deleteAliasRecord(ctx.kv, request.projectId, request.alias)) {
    throw new ApiError(404, `Alias "${request.alias.slice(0, 256)}" not found`);
  }
  ctx.records.invalidate(aliasKey(request.projectId, request.alias));
  return true;
}

/** The project's aliases within the caller's scope, in name order. */
export async function listAliases(
  ctx: ServiceContext,
  request: RequestOf<"listAliases">,
  scope: Pick<KeyScope, "indexes">,
): Promise<{ alias: string; indexName: string }[]> {
  return (await listAliasRecords(ctx.kv, request.projectId))
    .filter(({ alias }) => allowsIndex(scope, alias))
    .map(({ alias, indexName }) => ({ alias, indexName }));
}
