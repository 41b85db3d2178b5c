/** The zod schema of `createKey`'s request: a key's scope, expiry and rate, or a public key for tenant tokens. */
import { z } from "zod";

/** The most actions and index patterns a key lists. */
const MAX_KEY_ACTIONS = 32;
const MAX_KEY_INDEXES = 100;

/** A public JWK that verifies tenant tokens; which kinds are taken is checked by `createKey`. */
const publicKeySchema = z.looseObject({
  kty: z.string().optional(),
  crv: z.string().optional(),
  x: z.string().optional(),
  y: z.string().optional(),
})
  .describe("A public JWK: Ed25519 (kty OKP) for EdDSA tokens, or P-256 (kty EC) for ES256 tokens");

/** The latest expiry a key may have: the end of the year 9999, the last that ISO 8601 writes in four digits. */
export const LATEST_EXPIRY_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** A key's expiry: an ISO 8601 time whose instant, in UTC, is no later than the year 9999. */
const expirySchema = z.iso.datetime({ offset: true }).refine((time) => Date.parse(time) <= LATEST_EXPIRY_MS, {
  message: "expected a time no later than 9999-12-31T23:59:59.999Z",
});

/** The request of `createKey`, given the schemas of a project id and an index name, and the API's actions. */
export function createKeySchema<A extends readonly [string, ...string[]]>(
  names: { projectId: z.ZodType<string>; indexName: z.ZodType<string> },
  actions: A,
) {
  return z.object({
    action: z.literal("createKey"),
    projectId: names.projectId,
    description: z.string().max(256).optional(),
    actions: z.array(z.enum([...actions, "*"])).min(1).max(MAX_KEY_ACTIONS).optional().describe(
      'Action names, or "*" for every action but key management and searchAnalytics, granted only by name (default ["*"])',
    ),
    indexes: z.array(names.indexName).min(1).max(MAX_KEY_INDEXES).optional().describe(
      'Index names, where a trailing "*" matches a prefix (default ["*"])',
    ),
    expiresAt: expirySchema.optional().describe("When the key stops working (ISO 8601, no later than the year 9999)"),
    requestsPerMinute: z.number().int().min(1).max(1_000_000).optional().describe(
      "The most requests a minute, across every instance; more get 429",
    ),
    publicKey: publicKeySchema.optional().describe(
      "Registers a public key for tenant tokens instead of making a secret key",
    ),
  });
}
