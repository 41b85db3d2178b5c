/**
 * The webhook bodies as plain TypeScript types: `options.notify`, `getWebhookSecret`, `rotateWebhookSecret` and the
 * event quire POSTs when a queued job ends. `api_types.ts` joins them into the API's unions;
 * `tests/unit/api_types_test.ts` checks them against the zod schemas.
 */

/** `options.notify` of a queued write (`wait: false`): where to POST the event when its job ends. */
export interface NotifyOptions {
  /** In `WEBHOOK_ALLOWED_HOSTS`, and `https` unless a loopback host (`127.0.0.1`, `::1`, `localhost`). */
  url: string;
}

/** The body of `getWebhookSecret`: the project's secret, created on first use. */
export interface GetWebhookSecretRequest {
  /** The action. */
  action: "getWebhookSecret";
  /** The project. */
  projectId: string;
}

/** The body of `rotateWebhookSecret`: a new secret, which signs every event from then on. */
export interface RotateWebhookSecretRequest {
  /** The action. */
  action: "rotateWebhookSecret";
  /** The project. */
  projectId: string;
}

/** The answer of `getWebhookSecret` and `rotateWebhookSecret`. */
export interface WebhookSecret {
  /** `whsec_…`: the key of the HMAC-SHA256 in every event's `Quire-Signature` header. */
  secret: string;
}

/** The types of webhook events. */
export type WebhookEventType = "job.completed" | "job.failed";

/** The JSON body that quire POSTs when a queued job ends; it never holds document text. */
export interface WebhookEvent {
  /** `job.completed` (status `Ready`) or `job.failed` (status `Failed`). */
  type: WebhookEventType;
  /** The project. */
  projectId: string;
  /** The index the job wrote. */
  indexName: string;
  /** The job's id: the same in every retry of the event, so that receivers can drop repeats. */
  jobId: string;
  /** The index's status when the job ended. */
  status: "Ready" | "Failed";
  /** The index's documents when the job ended. */
  docCount: number;
  /** Why the job failed, when `Failed`. */
  error?: string | undefined;
  /** ISO 8601 time the job ended. */
  at: string;
}
