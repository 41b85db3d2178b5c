/** `deleteKey`: a key stops working on every instance within `METADATA_CACHE_MS`. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import { ApiError } from "../api/api_error.ts";
import type { Access } from "../keys/access.ts";
import { widerThan } from "../keys/key_scope.ts";
import { deleteApiKey, getApiKey } from "../storage/api_key_records.ts";
import { apiKeyHashKey, apiKeyKey } from "../storage/kv_keys.ts";

/** Deletes a key within the caller's rights; 404 for a key the caller does not have or may not see. */
export async function deleteKey(ctx: ServiceContext, request: RequestOf<"deleteKey">, access: Access): Promise<true> {
  const { projectId, keyId } = request;
  const record = await getApiKey(ctx.kv, projectId, keyId);
  // A key beyond the caller's rights is as unknown to it as one that does not exist.
  if (record === null || widerThan(record, access.scope) !== null || !await deleteApiKey(ctx.kv, projectId, keyId)) {
    throw new ApiError(404, `Key "${keyId.slice(0, 128)}" not found`);
  }
  ctx.records.invalidate(apiKeyKey(projectId, keyId));
  if (record.keyHash !== undefined) ctx.records.invalidate(apiKeyHashKey(record.keyHash));
  return true;
}
