/**
 * Scoped keys in Deno KV: a record per key, a hash index for secrets, a project index for public keys, and a separate
 * record of last use.
 */
import {
  apiKeyHashKey,
  apiKeyKey,
  apiKeysPrefix,
  apiKeyUsageKey,
  apiKeyUsagePrefix,
  publicKeyProjectKey,
} from "./kv_keys.ts";

/** A scoped key as stored: a secret's hash or a public JWK, never a secret. */
export interface ApiKeyRecord {
  id: string;
  projectId: string;
  description: string;
  /** Action names, or `*` for every action but key management. */
  actions: string[];
  /** Index names, where a trailing `*` matches a prefix. */
  indexes: string[];
  /** An ISO time, or null for a key that never expires. */
  expiresAt: string | null;
  requestsPerMinute: number | null;
  createdAt: string;
  /** The SHA-256 hash of a secret key. */
  keyHash?: string;
  /** The public JWK that verifies tenant tokens. */
  publicKey?: JsonWebKey;
}

/** What a secret's hash points at. */
export interface ApiKeyHashEntry {
  projectId: string;
  keyId: string;
}

/**
 * Stores a new key, and its hash index for a secret key or its project index for a public key; false when the id or
 * hash is taken.
 */
export async function insertApiKey(kv: Deno.Kv, record: ApiKeyRecord): Promise<boolean> {
  const key = apiKeyKey(record.projectId, record.id);
  const commit = kv.atomic().check({ key, versionstamp: null }).set(key, record);
  if (record.keyHash !== undefined) {
    const hashKey = apiKeyHashKey(record.keyHash);
    const entry: ApiKeyHashEntry = { projectId: record.projectId, keyId: record.id };
    commit.check({ key: hashKey, versionstamp: null }).set(hashKey, entry);
  } else {
    const projectOf = publicKeyProjectKey(record.id);
    commit.check({ key: projectOf, versionstamp: null }).set(projectOf, record.projectId);
  }
  return (await commit.commit()).ok;
}

/** Lists a project's keys in id order. */
export async function listApiKeys(kv: Deno.Kv, projectId: string): Promise<ApiKeyRecord[]> {
  const keys: ApiKeyRecord[] = [];
  for await (const entry of kv.list<ApiKeyRecord>({ prefix: apiKeysPrefix(projectId) })) keys.push(entry.value);
  return keys;
}

/** Reads a key, or null. */
export async function getApiKey(kv: Deno.Kv, projectId: string, keyId: string): Promise<ApiKeyRecord | null> {
  return (await kv.get<ApiKeyRecord>(apiKeyKey(projectId, keyId))).value;
}

/** Deletes a key with its hash or project index and its use record; false when it does not exist. */
export async function deleteApiKey(kv: Deno.Kv, projectId: string, keyId: string): Promise<boolean> {
  for (;;) {
    const entry = await kv.get<ApiKeyRecord>(apiKeyKey(projectId, keyId));
    if (entry.value === null) return false;
    const commit = kv.atomic().check(entry).delete(entry.key).delete(apiKeyUsageKey(projectId, keyId));
    if (entry.value.keyHash !== undefined) commit.delete(apiKeyHashKey(entry.value.keyHash));
    else commit.delete(publicKeyProjectKey(keyId));
    if ((await commit.commit()).ok) return true;
  }
}

/** Deletes every key of a project, as the project goes. */
export async function deleteProjectApiKeys(kv: Deno.Kv, projectId: string): Promise<void> {
  for (const record of await listApiKeys(kv, projectId)) await deleteApiKey(kv, projectId, record.id);
}

/** When each of a project's keys was last used, by key id. */
export async function readApiKeyUses(kv: Deno.Kv, projectId: string): Promise<Map<string, string>> {
  const uses = new Map<string, string>();
  for await (const entry of kv.list<string>({ prefix: apiKeyUsagePrefix(projectId) })) {
    uses.set(String(entry.key.at(-1)), entry.value);
  }
  return uses;
}

/** Records that a key was used at `at` (an ISO time), unless it was deleted meanwhile. */
export async function writeApiKeyUse(kv: Deno.Kv, projectId: string, keyId: string, at: string): Promise<void> {
  const entry = await kv.get(apiKeyKey(projectId, keyId));
  if (entry.versionstamp === null) return;
  await kv.atomic().check(entry).set(apiKeyUsageKey(projectId, keyId), at).commit();
}
