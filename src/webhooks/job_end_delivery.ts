/** The webhook event of a queued job's end, as the outbox record that the job's final commit writes. */
import type { NotifyOptions, WebhookEvent } from "../api/webhook_api_types.ts";
import type { IndexRecord } from "../storage/index_records.ts";
import { deliveryMutation, type WebhookDelivery } from "../storage/webhook_outbox.ts";

/** How long quire retries a delivery after the job ended, before it gives up. */
export const RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** How a job ended: the index record its final commit leaves, and why it failed, if it did. */
export interface JobEnd {
  jobId: string;
  record: IndexRecord;
  error?: string;
}

/** The event that reports `end`; it names the index and its count, and holds no document text. */
export function jobEndEvent(end: JobEnd, at = Date.now()): WebhookEvent {
  const failed = end.error !== undefined;
  const event: WebhookEvent = {
    type: failed ? "job.failed" : "job.completed",
    projectId: end.record.projectId,
    indexName: end.record.name,
    jobId: end.jobId,
    status: failed ? "Failed" : "Ready",
    docCount: end.record.docCount,
    at: new Date(at).toISOString(),
  };
  if (failed) event.error = end.error;
  return event;
}

/** The mutation that puts the delivery of `end`'s event to `notify` in the outbox, due at once. */
export function jobEndMutation(notify: NotifyOptions, end: JobEnd): Deno.KvMutation {
  const now = Date.now();
  const delivery: WebhookDelivery = {
    projectId: end.record.projectId,
    url: notify.url,
    event: jobEndEvent(end, now),
    createdAt: now,
    attempts: 0,
    nextAttemptAt: now,
  };
  return deliveryMutation(delivery, RETRY_WINDOW_MS);
}
