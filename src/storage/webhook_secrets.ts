/**
 * Each project's webhook secret in Deno KV. It is kept as it is, not hashed: quire needs the secret itself to sign
 * events with HMAC-SHA256.
 */
import { webhookSecretKey } from "./kv_keys.ts";

/** A project's webhook secret as stored. */
export interface WebhookSecretRecord {
  secret: string;
  createdAt: string;
}

/** Reads a project's webhook secret; null when it has none yet. */
export async function readWebhookSecret(kv: Deno.Kv, projectId: string): Promise<string | null> {
  return (await kv.get<WebhookSecretRecord>(webhookSecretKey(projectId))).value?.secret ?? null;
}

/** Stores a project's first webhook secret; false, leaving the one stored, when it already has one. */
export async function insertWebhookSecret(kv: Deno.Kv, projectId: string, secret: string): Promise<boolean> {
  const key = webhookSecretKey(projectId);
  const record: WebhookSecretRecord = { secret, createdAt: new Date().toISOString() };
  return (await kv.atomic().check({ key, versionstamp: null }).set(key, record).commit()).ok;
}

/** Replaces a project's webhook secret, or stores its first. */
export async function replaceWebhookSecret(kv: Deno.Kv, projectId: string, secret: string): Promise<void> {
  const record: WebhookSecretRecord = { secret, createdAt: new Date().toISOString() };
  await kv.set(webhookSecretKey(projectId), record);
}
