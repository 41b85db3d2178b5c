/** `createKey`: a scoped key with a secret shown once, or a registered public key that verifies tenant tokens. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import type { KeyView } from "../api/response_schemas.ts";
import { ApiError } from "../api/api_error.ts";
import { type Access, holderOf } from "../keys/access.ts";
import { type KeyScope, widerThan } from "../keys/key_scope.ts";
import { createApiKey } from "../keys/create_api_key.ts";
import { toKeyView } from "./key_view.ts";

/** Creates a key within the caller's own rights; 403 naming what would exceed them, 400 for an unusable public key. */
export async function createKey(
  ctx: ServiceContext,
  request: RequestOf<"createKey">,
  access: Access,
): Promise<KeyView & { key?: string }> {
  const scope: KeyScope = {
    actions: request.actions ?? ["*"],
    indexes: request.indexes ?? ["*"],
    expiresAt: request.expiresAt === undefined ? null : new Date(request.expiresAt).toISOString(),
    requestsPerMinute: request.requestsPerMinute ?? null,
  };
  const beyond = widerThan(scope, access.scope);
  if (beyond !== null) {
    throw new ApiError(
      403,
      `${holderOf(access)} may not create a key with ${beyond}: a key creates only keys within its own rights`,
    );
  }
  const { record, key } = await createApiKey(ctx.kv, request.projectId, {
    scope,
    description: request.description ?? "",
    publicKey: request.publicKey,
  });
  return key === undefined ? toKeyView(record) : { ...toKeyView(record), key };
}
