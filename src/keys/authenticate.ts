/**
 * Checks that the caller holds a credential: the project key, a scoped key (both in `x-project-key`), or a tenant token
 * (`authorization: Bearer`). First of some project, from the headers alone, before the body that names the project is
 * read; then of the project named, answering what the caller may do.
 */
import { ApiError } from "../api/api_error.ts";
import { PROJECT_ID_PATTERN } from "../api/project_id.ts";
import type { Metrics } from "../observability/metrics.ts";
import { apiKeyHashKey, apiKeyKey, projectKey, projectKeyHashKey, publicKeyProjectKey } from "../storage/kv_keys.ts";
import type { ProjectRecord } from "../storage/project_records.ts";
import type { ApiKeyHashEntry, ApiKeyRecord } from "../storage/api_key_records.ts";
import type { RecordCache } from "../storage/record_cache.ts";
import { hashesMatch, hashProjectKey } from "../projects/project_keys.ts";
import type { Access } from "./access.ts";
import { PROJECT_KEY_SCOPE } from "./key_scope.ts";
import { TenantTokens, tokenKeyId } from "./tenant_tokens.ts";

/** Hashes of recently presented keys are kept up to this many, so that a busy client's key is not hashed each time. */
const MAX_RECENT_HASHES = 1024;

/** The credentials a request presents. */
export interface Credentials {
  /** `x-project-key`: the project key or a scoped key. */
  key: string | null;
  /** `authorization`: `Bearer <tenant token>`. */
  authorization: string | null;
}

/** Authenticates requests against the project and key records; failures are counted in the metrics and logged. */
export class Authenticator {
  readonly #records: RecordCache;
  readonly #metrics: Metrics;
  readonly #tokens: TenantTokens;
  readonly #recentHashes = new Map<string, string>();

  constructor(records: RecordCache, metrics: Metrics) {
    this.#records = records;
    this.#metrics = metrics;
    this.#tokens = new TenantTokens(records);
  }

  /**
   * 403 unless the headers carry a credential of some project: a project key, a scoped key, or a tenant token that
   * verifies with its registered key. It reads no body, so that a caller without a credential costs no more than its
   * headers; {@link authenticate} then checks the credential against the project that the body names.
   */
  async checkCredentials(credentials: Credentials): Promise<void> {
    const { key, authorization } = credentials;
    if (key !== null && key !== "") {
      const hash = this.#hashOf(key);
      if (await this.#records.get<string>(projectKeyHashKey(hash)) !== null) return;
      if (await this.#records.get<ApiKeyHashEntry>(apiKeyHashKey(hash)) !== null) return;
      throw this.#refuse(403, 'Invalid "x-project-key": it is no key of any project');
    }
    if (authorization !== null && /^bearer /i.test(authorization)) {
      const token = authorization.slice("bearer ".length).trim();
      try {
        const keyId = tokenKeyId(token);
        const projectId = await this.#records.get<string>(publicKeyProjectKey(keyId));
        if (projectId === null) {
          throw new ApiError(403, `Unknown tenant token key "${keyId}": register its public key with createKey`);
        }
        await this.#tokens.verify(projectId, token);
        return;
      } catch (error) {
        if (error instanceof ApiError) throw this.#refuse(403, error.message);
        throw error;
      }
    }
    throw this.#refuse(403, 'Missing header "x-project-key" (or "authorization: Bearer <tenant token>")');
  }

  /**
   * What the caller of `projectId` may do; 404 for an unknown project, 403 for a wrong, missing, expired or deleted
   * key and for a token that does not verify.
   */
  async authenticate(projectId: string, credentials: Credentials): Promise<Access> {
    // An id that no project can have is not looked up (a very long one would not even fit in a KV key).
    const project = PROJECT_ID_PATTERN.test(projectId)
      ? await this.#records.get<ProjectRecord>(projectKey(projectId))
      : null;
    if (project === null) throw this.#refuse(404, `Project "${projectId.slice(0, 128)}" not found`);
    const { key, authorization } = credentials;
    if (key !== null && key !== "") return await this.#keyAccess(project, key);
    if (authorization !== null && /^bearer /i.test(authorization)) {
      try {
        return await this.#tokens.verify(projectId, authorization.slice("bearer ".length).trim());
      } catch (error) {
        if (error instanceof ApiError) throw this.#refuse(403, error.message);
        throw error;
      }
    }
    throw this.#refuse(403, 'Missing header "x-project-key" (or "authorization: Bearer <tenant token>")');
  }

  async #keyAccess(project: ProjectRecord, key: string): Promise<Access> {
    const hash = this.#hashOf(key);
    if (hashesMatch(hash, project.keyHash)) return { keyId: null, scope: PROJECT_KEY_SCOPE, credential: key };
    const invalid = () => this.#refuse(403, `Invalid "x-project-key" for project "${project.id}"`);
    const entry = await this.#records.get<ApiKeyHashEntry>(apiKeyHashKey(hash));
    if (entry === null || entry.projectId !== project.id) throw invalid();
    const record = await this.#records.get<ApiKeyRecord>(apiKeyKey(project.id, entry.keyId));
    if (record === null) throw invalid();
    if (record.expiresAt !== null && Date.parse(record.expiresAt) <= Date.now()) {
      throw this.#refuse(403, `Key "${record.id}" expired at ${record.expiresAt}`);
    }
    return { keyId: record.id, scope: record, credential: key };
  }

  #hashOf(key: string): string {
    let hash = this.#recentHashes.get(key);
    if (hash === undefined) {
      if (this.#recentHashes.size >= MAX_RECENT_HASHES) this.#recentHashes.clear();
      this.#recentHashes.set(key, hash = hashProjectKey(key));
    }
    return hash;
  }

  #refuse(status: 403 | 404, message: string): ApiError {
    const failures = this.#metrics.countAuthFailure();
    console.warn(`Authentication failure #${failures}: ${message}`);
    return new ApiError(status, message);
  }
}
