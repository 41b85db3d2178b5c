/**
 * Tenant tokens: JWTs (EdDSA or ES256) that an application signs with the private half of a key it registered, so
 * that a browser may search only its tenant's documents. A token is verified once and then remembered until its
 * `exp`; its key's record is read through the record cache on every use, so that a deleted key stops its tokens.
 */
import { ApiError } from "../api/api_error.ts";
import { apiKeyKey } from "../storage/kv_keys.ts";
import type { ApiKeyRecord } from "../storage/api_key_records.ts";
import type { RecordCache } from "../storage/record_cache.ts";
import { FilterSyntaxError, parseFilter } from "../search/metadata_filter.ts";
import type { Access, TenantFilter } from "./access.ts";
import { GRANTABLE_ACTIONS, type KeyScope, widerThan } from "./key_scope.ts";
import { importPublicKey, tokenAlgorithmOf } from "./public_keys.ts";
import { sha256Hex } from "../util/sha256_hex.ts";

/** Verified tokens are remembered up to this many; past it the memory starts afresh. */
const MAX_VERIFIED = 10_000;

/** The longest token looked at. */
const MAX_TOKEN_LENGTH = 16 * 1024;

interface Verified {
  projectId: string;
  keyId: string;
  /** `exp`, in milliseconds. */
  expires: number;
  /** What the token allows, less the token itself, which is not kept. */
  access: Omit<Access, "credential">;
}

const decoder = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/** Verifies tenant tokens against the public keys registered with `createKey`. */
export class TenantTokens {
  readonly #records: RecordCache;
  /** Verified tokens by the SHA-256 of their text, so that each costs the same memory however long it is. */
  readonly #verified = new Map<string, Verified>();
  /** Imported public keys by project, key id and JWK, so that each is imported once. */
  readonly #publicKeys = new Map<string, Promise<CryptoKey>>();

  constructor(records: RecordCache) {
    this.#records = records;
  }

  /** What the token lets a caller of `projectId` do; an ApiError (403) when it does not verify. */
  async verify(projectId: string, token: string): Promise<Access> {
    const hash = token.length <= MAX_TOKEN_LENGTH ? sha256Hex(token) : "";
    const known = this.#verified.get(hash);
    if (known !== undefined && known.projectId === projectId) {
      await this.#registeredKey(projectId, known.keyId);
      if (known.expires <= Date.now()) throw refused(`Tenant token expired at ${isoTime(known.expires)}`);
      return { ...known.access, credential: token };
    }
    const verified = await this.#verifyAfresh(projectId, token);
    if (this.#verified.size >= MAX_VERIFIED) this.#verified.clear();
    this.#verified.set(hash, verified);
    return { ...verified.access, credential: token };
  }

  async #verifyAfresh(projectId: string, token: string): Promise<Verified> {
    const { parts, header } = tokenHeader(token);
    const record = await this.#registeredKey(projectId, header.kid);
    const algorithm = tokenAlgorithmOf(record.publicKey!);
    if (typeof algorithm === "string" || algorithm.alg !== header.alg) {
      throw refused(`Tenant token algorithm "${header.alg}" does not match key "${record.id}"`);
    }
    const signature = base64url(parts[2]!, "signature");
    const signed = encoder.encode(`${parts[0]}.${parts[1]}`);
    const publicKey = await this.#publicKey(record);
    if (!await crypto.subtle.verify(algorithm.verifyParams, publicKey, signature, signed)) {
      throw refused(`Tenant token signature does not verify with key "${record.id}"`);
    }
    const claims = jsonPart(parts[1]!, "claims");
    if (typeof claims.exp !== "number" || !Number.isFinite(claims.exp)) {
      throw refused('Invalid tenant token: "exp" is required, in seconds since 1970');
    }
    const expires = claims.exp * 1000;
    if (expires <= Date.now()) throw refused(`Tenant token expired at ${isoTime(expires)}`);
    const tenantFilters = filtersOf(claims.indexes);
    const scope: KeyScope = {
      actions: actionsOf(claims.actions) ?? record.actions,
      indexes: tenantFilters.map(({ pattern }) => pattern),
      expiresAt: record.expiresAt,
      requestsPerMinute: record.requestsPerMinute,
    };
    const beyond = widerThan(scope, record);
    if (beyond !== null) throw refused(`Tenant token grants ${beyond}, beyond its key "${record.id}"`);
    return { projectId, keyId: record.id, expires, access: { keyId: record.id, scope, tenantFilters } };
  }

  /** The registered public key `keyId` of the project, unless it is missing, expired or a secret key. */
  async #registeredKey(projectId: string, keyId: string): Promise<ApiKeyRecord> {
    const record = await this.#records.get<ApiKeyRecord>(apiKeyKey(projectId, keyId));
    if (record === null || record.publicKey === undefined) {
      throw refused(`Unknown tenant token key "${keyId}": register its public key with createKey`);
    }
    if (record.expiresAt !== null && Date.parse(record.expiresAt) <= Date.now()) {
      throw refused(`Key "${record.id}" expired at ${record.expiresAt}`);
    }
    return record;
  }

  #publicKey(record: ApiKeyRecord): Promise<CryptoKey> {
    const id = JSON.stringify([record.projectId, record.id, record.createdAt]);
    let key = this.#publicKeys.get(id);
    if (key === undefined) {
      if (this.#publicKeys.size >= MAX_VERIFIED) this.#publicKeys.clear();
      const algorithm = tokenAlgorithmOf(record.publicKey!);
      if (typeof algorithm === "string") throw refused(`Key "${record.id}" cannot verify tokens: ${algorithm}`);
      key = importPublicKey(record.publicKey!, algorithm);
      this.#publicKeys.set(id, key);
    }
    return key;
  }
}

/** The `kid` of a token's header: the id of the registered key that signed it; 403 for a token that is no JWT. */
export function tokenKeyId(token: string): string {
  return tokenHeader(token).header.kid;
}

/** A token's three parts, and its header with an accepted `alg` and a `kid`; 403 otherwise. */
function tokenHeader(token: string): { parts: string[]; header: { alg: "EdDSA" | "ES256"; kid: string } } {
  const parts = token.length <= MAX_TOKEN_LENGTH ? token.split(".") : [];
  if (parts.length !== 3) throw refused("Invalid tenant token: expected a JWT of three base64url parts");
  const header = jsonPart(parts[0]!, "header");
  if (header.alg === "none" || (header.alg !== "EdDSA" && header.alg !== "ES256")) {
    throw refused(`Tenant token algorithm ${JSON.stringify(header.alg)} is not accepted: use "EdDSA" or "ES256"`);
  }
  if (typeof header.kid !== "string" || header.kid === "" || header.kid.length > 128) {
    throw refused('Invalid tenant token: its header names no "kid", the keyId of a registered public key');
  }
  return { parts, header: { alg: header.alg, kid: header.kid } };
}

function refused(message: string): ApiError {
  return new ApiError(403, message);
}

function isoTime(ms: number): string {
  return Number.isFinite(ms) && Math.abs(ms) < 8.64e15 ? new Date(ms).toISOString() : String(ms);
}

/**
 * The bytes of a token's part, decoded strictly: only the canonical encoding (no padding, white space or stray bits) is
 * accepted, so that one token has one text and cannot be varied to fill the cache of verified tokens.
 */
function base64url(part: string, name: string): Uint8Array<ArrayBuffer> {
  let bytes: Uint8Array<ArrayBuffer> | undefined;
  try {
    bytes = Uint8Array.fromBase64(part, { alphabet: "base64url" });
  } catch {
    // Refused below.
  }
  if (bytes === undefined || bytes.toBase64({ alphabet: "base64url", omitPadding: true }) !== part) {
    throw refused(
      `Invalid tenant token: its ${name} is not canonical base64url (no padding, white space or stray bits)`,
    );
  }
  return bytes;
}

function jsonPart(part: string, name: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(base64url(part, name)));
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw refused(`Invalid tenant token: its ${name} is not JSON`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw refused(`Invalid tenant token: its ${name} is not a JSON object`);
  }
  return value as Record<string, unknown>;
}

/** The token's `indexes` claim as patterns with parsed filters. */
function filtersOf(indexes: unknown): TenantFilter[] {
  if (typeof indexes !== "object" || indexes === null || Array.isArray(indexes) || Object.keys(indexes).length === 0) {
    throw refused('Invalid tenant token: "indexes" must map index names or patterns to {"filter": …}');
  }
  return Object.entries(indexes).map(([pattern, rule]) => {
    if (rule !== null && (typeof rule !== "object" || Array.isArray(rule))) {
      throw refused(`Invalid tenant token: "indexes.${pattern}" must be an object such as {"filter": …}`);
    }
    const filter = (rule as { filter?: unknown } | null)?.filter;
    if (filter === undefined || filter === null) return { pattern, filter: undefined };
    try {
      return { pattern, filter: parseFilter(filter) };
    } catch (error) {
      if (!(error instanceof FilterSyntaxError)) throw error;
      throw refused(`Invalid tenant token: the filter of "${pattern}" is malformed: ${error.message}`);
    }
  });
}

/** The token's `actions` claim, or undefined for the key's own. */
function actionsOf(actions: unknown): string[] | undefined {
  if (actions === undefined) return undefined;
  const valid = Array.isArray(actions) &&
    actions.every((action) => typeof action === "string" && (action === "*" || GRANTABLE_ACTIONS.includes(action)));
  if (!valid) throw refused('Invalid tenant token: "actions" must be a list of action names');
  return actions;
}
