/**
 * The webhook outbox: one record per event still to be delivered, written in the same atomic commit that ends its job,
 * so that a job's end and its delivery are recorded together or not at all. Any instance delivers a record: it claims
 * it by moving its next attempt past the attempt's deadline, in one atomic check, and deletes it once delivered or
 * given up.
 */
import type { WebhookEvent } from "../api/webhook_api_types.ts";
import { webhookOutboxKey, webhookOutboxPrefix } from "./kv_keys.ts";

/** An event to deliver, and how its delivery has gone so far. */
export interface WebhookDelivery {
  projectId: string;
  /** The `options.notify.url` of the job, checked against `WEBHOOK_ALLOWED_HOSTS` when it was queued. */
  url: string;
  event: WebhookEvent;
  /** When the job ended (milliseconds since the epoch); retries stop a day after. */
  createdAt: number;
  attempts: number;
  /** When the next attempt is due, or, while an instance attempts it, when that attempt's claim lapses. */
  nextAttemptAt: number;
  /** Why the last attempt failed. */
  lastError?: string;
}

/** How long a record outlives the end of its retries, in case no instance ran to give it up. */
const KEEP_AFTER_MS = 60 * 60 * 1000;

/** The mutation that records `delivery` in the outbox, to commit with the end of its job. */
export function deliveryMutation(delivery: WebhookDelivery, retryWindowMs: number): Deno.KvMutation {
  return {
    type: "set",
    key: webhookOutboxKey(delivery.event.jobId),
    value: delivery,
    expireIn: expiryOf(delivery, retryWindowMs),
  };
}

/** Every delivery in the outbox, in job id order (the order the jobs were queued in). */
export async function* listDeliveries(kv: Deno.Kv): AsyncGenerator<Deno.KvEntry<WebhookDelivery>> {
  yield* kv.list<WebhookDelivery>({ prefix: webhookOutboxPrefix() });
}

/**
 * Replaces a delivery if it is still `current` (a claim, or the outcome of a failed attempt); returns the new entry,
 * or null when another instance changed or removed it first.
 */
export async function updateDelivery(
  kv: Deno.Kv,
  current: Deno.KvEntry<WebhookDelivery>,
  next: WebhookDelivery,
  retryWindowMs: number,
): Promise<Deno.KvEntry<WebhookDelivery> | null> {
  const result = await kv.atomic().check(current).set(current.key, next, { expireIn: expiryOf(next, retryWindowMs) })
    .commit();
  return result.ok ? { key: current.key, value: next, versionstamp: result.versionstamp } : null;
}

/**
 * Removes a delivery: one that was made, whatever happened to it since, or with `ifUnchanged`, one given up, unless
 * another instance has claimed it since.
 */
export async function removeDelivery(
  kv: Deno.Kv,
  entry: Deno.KvEntry<WebhookDelivery>,
  options: { ifUnchanged?: boolean } = {},
): Promise<void> {
  const commit = kv.atomic();
  if (options.ifUnchanged) commit.check(entry);
  await commit.delete(entry.key).commit();
}

function expiryOf(delivery: WebhookDelivery, retryWindowMs: number): number {
  return Math.max(1, delivery.createdAt + retryWindowMs + KEEP_AFTER_MS - Date.now());
}
