/** `listKeys`: the project's keys that lie within the caller's rights, with their last use, never their secrets. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import type { KeyView } from "../api/response_schemas.ts";
import type { Access } from "../keys/access.ts";
import { widerThan } from "../keys/key_scope.ts";
import { listApiKeys, readApiKeyUses } from "../storage/api_key_records.ts";
import { toKeyView } from "./key_view.ts";

/** Lists the keys in id order; `lastUsedAt` is null for a key never used, and may lag its use by a minute. */
export async function listKeys(
  ctx: ServiceContext,
  request: RequestOf<"listKeys">,
  access: Access,
): Promise<(KeyView & { lastUsedAt: string | null })[]> {
  const [records, uses] = await Promise.all([
    listApiKeys(ctx.kv, request.projectId),
    readApiKeyUses(ctx.kv, request.projectId),
  ]);
  return records.filter((record) => widerThan(record, access.scope) === null)
    .map((record) => ({ ...toKeyView(record), lastUsedAt: uses.get(record.id) ?? null }));
}
