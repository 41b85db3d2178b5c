/** `setAlias`, `deleteAlias` and `listAliases`: other names of indexes, swapped atomically for blue-green rebuilds. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import { ApiError } from "../api/api_error.ts";
import { indexNotFound } from "../api/index_errors.ts";
import { allowsIndex, type KeyScope } from "../keys/key_scope.ts";
import { type Access, holderOf } from "../keys/access.ts";
import { deleteAliasRecord, listAliasRecords, setAliasRecord } from "../storage/alias_records.ts";
import { aliasKey } from "../storage/kv_keys.ts";

/**
 * Points an alias at an index in one atomic step; 404 for a missing index, 409 when an index has the alias's name, 403
 * when the alias points at an index outside the caller's scope (the alias and the new index were checked before).
 */
export async function setAlias(ctx: ServiceContext, request: RequestOf<"setAlias">, access: Access): Promise<true> {
  const { projectId, alias, indexName } = request;
  const record = { projectId, alias, indexName, updatedAt: new Date().toISOString() };
  const refusal = await setAliasRecord(ctx.kv, record, (from) => allowsIndex(access.scope, from));
  if (refusal === "missing") throw indexNotFound(indexName);
  if (refusal === "shadows") {
    throw new ApiError(409, `Alias "${alias}" would shadow the index of that name: an alias needs a name of its own`);
  }
  if (refusal !== null) throw outsideScope(access, alias, refusal.from);
  ctx.records.invalidate(aliasKey(projectId, alias));
  return true;
}

/** Deletes an alias; 404 when there is none, 403 when it points at an index outside the caller's scope. */
export async function deleteAlias(
  ctx: ServiceContext,
  request: RequestOf<"deleteAlias">,
  access: Access,
): Promise<true> {
  const deleted = await deleteAliasRecord(ctx.kv, request, (from) => allowsIndex(access.scope, from));
  if (deleted === false) throw new ApiError(404, `Alias "${request.alias.slice(0, 256)}" not found`);
  if (deleted !== true) throw outsideScope(access, request.alias, deleted.from);
  ctx.records.invalidate(aliasKey(request.projectId, request.alias));
  return true;
}

/** 403: the alias points at an index that the caller's scope does not cover, so it may not take the alias from it. */
function outsideScope(access: Access, alias: string, from: string): ApiError {
  return new ApiError(403, `${holderOf(access)} may not use index "${from}", which alias "${alias}" points at`);
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
