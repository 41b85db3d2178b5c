/** Makes a scoped key: a fresh secret of which only the hash is stored, or a registered public key. */
import { ApiError } from "../api/api_error.ts";
import { generateProjectKey, hashProjectKey } from "../projects/project_keys.ts";
import { type ApiKeyRecord, insertApiKey } from "../storage/api_key_records.ts";
import { type KeyScope, NAMED_ONLY_ACTIONS } from "./key_scope.ts";
import { importPublicKey, tokenAlgorithmOf } from "./public_keys.ts";

/** What a new key is: its scope, a description, and a public JWK for a key that verifies tenant tokens. */
export interface NewApiKey {
  scope: KeyScope;
  description: string;
  publicKey?: JsonWebKey | undefined;
}

/**
 * Stores a new key of `projectId`; returns its record and, for a secret key, the secret. 400 for a bad public key, and
 * for a public key granted an action that a tenant token may never use.
 */
export async function createApiKey(
  kv: Deno.Kv,
  projectId: string,
  { scope, description, publicKey }: NewApiKey,
): Promise<{ record: ApiKeyRecord; key?: string }> {
  if (publicKey !== undefined) {
    const named = scope.actions.find((action) => NAMED_ONLY_ACTIONS.includes(action));
    if (named !== undefined) {
      throw new ApiError(
        400,
        `Invalid "actions": a key with a "publicKey" may not be granted "${named}": tenant tokens never manage keys or ` +
          "read analytics",
      );
    }
    await checkPublicKey(publicKey);
  }
  for (;;) {
    const key = publicKey === undefined ? generateProjectKey() : undefined;
    const record: ApiKeyRecord = {
      id: `k_${crypto.getRandomValues(new Uint8Array(12)).toBase64({ alphabet: "base64url" })}`,
      projectId,
      description,
      actions: [...scope.actions],
      indexes: [...scope.indexes],
      expiresAt: scope.expiresAt === null ? null : new Date(scope.expiresAt).toISOString(),
      requestsPerMinute: scope.requestsPerMinute,
      createdAt: new Date().toISOString(),
    };
    if (key !== undefined) record.keyHash = hashProjectKey(key);
    else {
      // Only the members that verify are kept: the rest (key_ops, ext, anything a client adds) is not the key.
      const { kty, crv, x, y } = publicKey!;
      record.publicKey = y === undefined ? { kty, crv, x } : { kty, crv, x, y };
    }
    // Random ids and secrets do not collide in practice; a collision draws again.
    if (await insertApiKey(kv, record)) return key === undefined ? { record } : { record, key };
  }
}

/** 400 unless the JWK is an Ed25519 or P-256 public key that WebCrypto imports. */
async function checkPublicKey(jwk: JsonWebKey): Promise<void> {
  const algorithm = tokenAlgorithmOf(jwk);
  if (typeof algorithm === "string") throw new ApiError(400, `Invalid "publicKey": ${algorithm}`);
  try {
    await importPublicKey(jwk, algorithm);
  } catch (error) {
    throw new ApiError(400, `Invalid "publicKey": ${(error as Error).message}`);
  }
}
