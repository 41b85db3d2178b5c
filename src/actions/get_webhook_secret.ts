/** `getWebhookSecret`: the project's webhook secret, created on first use; only for keys with admin rights. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import type { WebhookSecret } from "../api/webhook_api_types.ts";
import { projectWebhookSecret } from "../webhooks/project_webhook_secret.ts";

/** Returns the secret that signs the project's webhook events. */
export async function getWebhookSecret(
  ctx: ServiceContext,
  request: RequestOf<"getWebhookSecret">,
): Promise<WebhookSecret> {
  return { secret: await projectWebhookSecret(ctx.kv, request.projectId) };
}
