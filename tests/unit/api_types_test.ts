/**
 * The explicit API types of `src/api/api_types.ts` (what the client and the package publish) against the zod schemas
 * that validate and describe the bodies: this file fails to type-check when they drift apart.
 */
import assert from "node:assert/strict";
import type { z } from "zod";
import type * as Api from "../../src/api/api_types.ts";
import type { ManageRequestInput } from "../../src/api/request_schemas.ts";
import type { ACTIONS, HIT_FIELDS } from "../../src/api/request_schemas.ts";
import type { INDEX_STATUSES, RESPONSE_SCHEMAS, searchHitSchema } from "../../src/api/response_schemas.ts";
import type { SEARCH_MODES } from "../../src/search/search_mode.ts";
import type { indexSettingsSchema } from "../../src/api/settings_schemas.ts";
import type { WEBHOOK_EVENT_TYPES, webhookEventSchema } from "../../src/api/webhook_schemas.ts";

/** `true` when A and B are the same type, else `false`. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

function sameType<A, B>(same: Same<A, B>): boolean {
  return same;
}

function assignable<A extends B, B>(): boolean {
  return true;
}

Deno.test("each action's explicit response type is exactly its schema's output", () => {
  type Schemas = typeof RESPONSE_SCHEMAS;
  assert.ok(sameType<Api.ResponseOf<"createIndex">, z.output<Schemas["createIndex"]>>(true));
  assert.ok(sameType<Api.ResponseOf<"getIndex">, z.output<Schemas["getIndex"]>>(true));
  assert.ok(sameType<Api.ResponseOf<"listIndexes">, z.output<Schemas["listIndexes"]>>(true));
  assert.ok(sameType<Api.ResponseOf<"deleteIndex">, z.output<Schemas["deleteIndex"]>>(true));
  assert.ok(sameType<Api.ResponseOf<"addDocs">, z.output<Schemas["addDocs"]>>(true));
  assert.ok(sameType<Api.ResponseOf<"deleteDocs">, z.output<Schemas["deleteDocs"]>>(true));
  assert.ok(sameType<Api.ResponseOf<"getDocs">, z.output<Schemas["getDocs"]>>(true));
  assert.ok(sameType<Api.ResponseOf<"search">, z.output<Schemas["search"]>>(true));
  assert.ok(sameType<Api.SearchHit, z.output<typeof searchHitSchema>>(true));
  assert.ok(sameType<Api.ResponseOf<"updateSettings">, z.output<Schemas["updateSettings"]>>(true));
  assert.ok(sameType<Api.IndexSettings, z.output<typeof indexSettingsSchema>>(true));
  assert.ok(sameType<Api.ResponseOf<"multiSearch">, z.output<Schemas["multiSearch"]>>(true));
  assert.ok(sameType<Api.ResponseOf<"searchAnalytics">, z.output<Schemas["searchAnalytics"]>>(true));
  assert.ok(sameType<Api.ResponseOf<"createKey">, z.output<Schemas["createKey"]>>(true));
  assert.ok(sameType<Api.ResponseOf<"listKeys">, z.output<Schemas["listKeys"]>>(true));
  assert.ok(sameType<Api.ResponseOf<"deleteKey">, z.output<Schemas["deleteKey"]>>(true));
  assert.ok(sameType<Api.ResponseOf<"getWebhookSecret">, z.output<Schemas["getWebhookSecret"]>>(true));
  assert.ok(sameType<Api.ResponseOf<"rotateWebhookSecret">, z.output<Schemas["rotateWebhookSecret"]>>(true));
  assert.ok(sameType<Api.WebhookEvent, z.output<typeof webhookEventSchema>>(true));
  assert.ok(sameType<Api.WebhookEventType, typeof WEBHOOK_EVENT_TYPES[number]>(true));
});

Deno.test("every explicit request type is a request the schema accepts, and the enumerations agree", () => {
  assert.ok(assignable<Api.ManageRequestInput, ManageRequestInput>());
  assert.ok(sameType<Api.Action, typeof ACTIONS[number]>(true));
  assert.ok(sameType<Api.SearchMode, typeof SEARCH_MODES[number]>(true));
  assert.ok(sameType<Api.HitField, typeof HIT_FIELDS[number]>(true));
  assert.ok(sameType<Api.IndexStatus, typeof INDEX_STATUSES[number]>(true));
});
