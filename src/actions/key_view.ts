/** How a scoped key is shown: never its secret or the secret's hash. */
import type { KeyView } from "../api/response_schemas.ts";
import type { ApiKeyRecord } from "../storage/api_key_records.ts";

/** The key as `createKey` and `listKeys` show it. */
export function toKeyView(record: ApiKeyRecord): KeyView {
  const view: KeyView = {
    keyId: record.id,
    description: record.description,
    actions: record.actions,
    indexes: record.indexes,
    expiresAt: record.expiresAt,
    requestsPerMinute: record.requestsPerMinute,
    createdAt: record.createdAt,
  };
  if (record.publicKey !== undefined) view.publicKey = { ...record.publicKey };
  return view;
}
