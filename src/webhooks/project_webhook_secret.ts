/** Each project's webhook secret: `whsec_` and 256 random bits, created on first use, replaced by a rotation. */
import { insertWebhookSecret, readWebhookSecret, replaceWebhookSecret } from "../storage/webhook_secrets.ts";

/** Makes a new random secret. */
export function newWebhookSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${bytes.toBase64({ alphabet: "base64url", omitPadding: true })}`;
}

/** The project's webhook secret; the first call creates it, and concurrent first calls agree on one. */
export async function projectWebhookSecret(kv: Deno.Kv, projectId: string): Promise<string> {
  for (;;) {
    const stored = await readWebhookSecret(kv, projectId);
    if (stored !== null) return stored;
    const secret = newWebhookSecret();
    if (await insertWebhookSecret(kv, projectId, secret)) return secret;
  }
}

/** Gives the project a new webhook secret, which signs every event sent from now on, and returns it. */
export async function rotateProjectWebhookSecret(kv: Deno.Kv, projectId: string): Promise<string> {
  const secret = newWebhookSecret();
  await replaceWebhookSecret(kv, projectId, secret);
  return secret;
}
