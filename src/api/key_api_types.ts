/**
 * The bodies of the project-level actions as plain TypeScript types: key management (`createKey`, `listKeys`,
 * `deleteKey`, and the key as they show it), aliases, and the undo of `deleteIndex`. `api_types.ts` joins them into the
 * API's unions; `tests/unit/api_types_test.ts` checks them against the zod schemas.
 */
import type { Action } from "./action_type.ts";

/** What a key may do, as `createKey` takes it and the key shows it. */
export interface KeyScopeInput {
  /** What the key is for, for people. */
  description?: string | undefined;
  /** Action names, or `"*"` for every action but key management and `searchAnalytics` (default `["*"]`). */
  actions?: (Action | "*")[] | undefined;
  /** Index names, where a trailing `*` matches a prefix (default `["*"]`). */
  indexes?: string[] | undefined;
  /** When the key stops working (ISO 8601, no later than the year 9999). */
  expiresAt?: string | undefined;
  /** The most requests a minute, across every instance; more get `429`. */
  requestsPerMinute?: number | undefined;
}

/** The body of `createKey`: a secret key, or with `publicKey`, a registered key that verifies tenant tokens. */
export interface CreateKeyRequest extends KeyScopeInput {
  /** The action. */
  action: "createKey";
  /** The project. */
  projectId: string;
  /** A public JWK: Ed25519 (`kty: "OKP"`) for EdDSA tokens, or P-256 (`kty: "EC"`) for ES256 tokens. */
  publicKey?: PublicJwk | undefined;
}

/**
 * A public JWK, as WebCrypto's `exportKey("jwk", …)` gives it (other members, such as `key_ops`, are ignored); which
 * kinds are taken is checked by the server.
 */
export type PublicJwk = {
  /** `"OKP"` (Ed25519) or `"EC"` (P-256). */
  kty?: string | undefined;
  /** `"Ed25519"` or `"P-256"`. */
  crv?: string | undefined;
  /** The public point (base64url). */
  x?: string | undefined;
  /** P-256's second coordinate (base64url). */
  y?: string | undefined;
};

/** The body of `listKeys`. */
export interface ListKeysRequest {
  /** The action. */
  action: "listKeys";
  /** The project. */
  projectId: string;
}

/** The body of `deleteKey`. */
export interface DeleteKeyRequest {
  /** The action. */
  action: "deleteKey";
  /** The project. */
  projectId: string;
  /** The key to delete. */
  keyId: string;
}

/** A key as the API shows it: never its secret. */
export interface KeyView {
  /** Names the key in `deleteKey`, and a tenant token's `kid`. */
  keyId: string;
  /** What the key is for. */
  description: string;
  /** Action names, or `"*"`. */
  actions: string[];
  /** Index names and `*`-patterns. */
  indexes: string[];
  /** When it stops working, or null. */
  expiresAt: string | null;
  /** Its rate, or null for none. */
  requestsPerMinute: number | null;
  /** ISO 8601 time of creation. */
  createdAt: string;
  /** The registered public JWK of a key for tenant tokens. */
  publicKey?: Record<string, unknown> | undefined;
}

/** The answer of `createKey`: the secret appears only here, and not for a public key. */
export interface CreatedKey extends KeyView {
  /** The secret, `qk_…`, sent as `x-project-key`. */
  key?: string | undefined;
}

/** One key of `listKeys`. */
export interface ListedKey extends KeyView {
  /** When it was last used, to within a minute, or null. */
  lastUsedAt: string | null;
}

/** The body of `setAlias`: points `alias` at the index `indexName`, creating or moving it in one step. */
export interface SetAliasRequest {
  /** The action. */
  action: "setAlias";
  /** The project. */
  projectId: string;
  /** The other name; it may not be an index's name. */
  alias: string;
  /** The index it points at from now on. */
  indexName: string;
}

/** The body of `deleteAlias`. */
export interface DeleteAliasRequest {
  /** The action. */
  action: "deleteAlias";
  /** The project. */
  projectId: string;
  /** The alias to delete. */
  alias: string;
}

/** The body of `listAliases`. */
export interface ListAliasesRequest {
  /** The action. */
  action: "listAliases";
  /** The project. */
  projectId: string;
}

/** One alias of `listAliases`. */
export interface AliasView {
  /** The other name. */
  alias: string;
  /** The index it points at. */
  indexName: string;
}

/** The body of `restoreIndex`: brings back the latest deleted index of that name within `UNDO_WINDOW`. */
export interface RestoreIndexRequest {
  /** The action. */
  action: "restoreIndex";
  /** The project. */
  projectId: string;
  /** The deleted index's name. */
  indexName: string;
  /** Which deletion of the name, by the id `listDeletedIndexes` shows; the latest when absent. */
  indexId?: string | undefined;
}

/** The body of `listDeletedIndexes`. */
export interface ListDeletedIndexesRequest {
  /** The action. */
  action: "listDeletedIndexes";
  /** The project. */
  projectId: string;
}
