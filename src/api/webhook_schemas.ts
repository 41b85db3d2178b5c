/**
 * The zod schemas of webhooks: the `options.notify` of a queued write, the answer of `getWebhookSecret` and
 * `rotateWebhookSecret`, and the event that quire POSTs when a queued job ends.
 */
import { z } from "zod";

/** The header of a webhook event that carries its signature. */
export const SIGNATURE_HEADER_NAME = "Quire-Signature";

/** The longest `options.notify.url`. */
export const MAX_NOTIFY_URL_LENGTH = 2048;

/** `options.notify` of a queued write; where the URL may point is checked against the server's settings. */
export const notifySchema = z.object({
  url: z.string().min(1).max(MAX_NOTIFY_URL_LENGTH).describe(
    "Where to POST the event: its host must be in WEBHOOK_ALLOWED_HOSTS, and it must be https unless that host is " +
      "a loopback address (127.0.0.1, ::1, localhost)",
  ),
}).describe("With options.wait false: POSTs a signed event (WebhookEvent) to url when the queued job ends");

/** The answer of `getWebhookSecret` and `rotateWebhookSecret`. */
export const webhookSecretSchema = z.object({
  secret: z.string().describe('"whsec_…": the key of the HMAC-SHA256 in every event\'s Quire-Signature header'),
});

/** The types of webhook events: a queued job ended `Ready` or `Failed`. */
export const WEBHOOK_EVENT_TYPES = ["job.completed", "job.failed"] as const;

/** The JSON body of a webhook event; it never holds document text. */
export const webhookEventSchema = z.object({
  type: z.enum(WEBHOOK_EVENT_TYPES),
  projectId: z.string(),
  indexName: z.string(),
  jobId: z.string().describe("The job's id: the same in every retry of its event, so that receivers can drop repeats"),
  status: z.enum(["Ready", "Failed"]).describe("The index's status when the job ended"),
  docCount: z.number().int().min(0).describe("The index's documents when the job ended"),
  error: z.string().optional().describe('Why the job failed, when status is "Failed"'),
  at: z.iso.datetime().describe("When the job ended"),
});
