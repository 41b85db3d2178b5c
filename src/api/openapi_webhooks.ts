/** The `webhooks` of the OpenAPI document: what quire POSTs to a queued write's `options.notify.url` when its job ends. */
import { SIGNATURE_HEADER_NAME } from "./webhook_schemas.ts";

/** The `webhooks` object; the event's schema is the `WebhookEvent` component. */
export function openApiWebhooks(): Record<string, unknown> {
  return {
    jobEnded: {
      post: {
        operationId: "jobEnded",
        summary: "A queued job ended, Ready (job.completed) or Failed (job.failed)",
        description:
          "Sent at least once, from any instance, to the options.notify.url of a queued write (createIndex " +
          "or addDocs with options.wait false, or reembedIndex). A 2xx answer ends the delivery; anything else, or " +
          "no answer within 10 s, is retried after 1 s, 2 s, 4 s, … (at most an hour apart) until a day after the " +
          "job ended. Retries carry the same jobId. The event holds no document text.",
        security: [],
        parameters: [{
          name: SIGNATURE_HEADER_NAME,
          in: "header",
          required: true,
          description: 't=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">, keyed by the UTF-8 bytes of the ' +
            "project's whole webhook secret (getWebhookSecret); signed again, with a new t, at each attempt",
          schema: { type: "string", pattern: "^t=[0-9]+,v1=[0-9a-f]{64}$" },
        }],
        requestBody: {
          required: true,
          content: { "application/json": { schema: { $ref: "#/components/schemas/WebhookEvent" } } },
        },
        responses: {
          "200": { description: "Received; any 2xx status ends the delivery" },
          "500": { description: "Not received; any other status, a redirect included, is retried" },
        },
      },
    },
  };
}
