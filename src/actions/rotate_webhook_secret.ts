/** `rotateWebhookSecret`: a new webhook secret for the project; only for keys with admin rights. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import type { WebhookSecret } from "../api/webhook_api_types.ts";
import { rotateProjectWebhookSecret } from "../webhooks/project_webhook_secret.ts";

/** Replaces the project's webhook secret and returns the new one, which signs every event sent from now on. */
export async function rotateWebhookSecret(
  ctx: ServiceContext,
  request: RequestOf<"rotateWebhookSecret">,
): Promise<WebhookSecret> {
  return { secret: await rotateProjectWebhookSecret(ctx.kv, request.projectId) };
}
