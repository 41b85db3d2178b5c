/**
 * Checks that the project exists and that the caller holds one of its credentials: the project key, a scoped key
 * (both in `x-project-key`), or a tenant token (`authorization: Bearer`). Answers what the caller may do.
 */
import { ApiError } from "../api/api_error.ts";
import { PROJECT_ID_PATTERN } from "../api/project_id.ts";
import type { Metrics } from "../observability/metrics.ts";
import { apiKeyHashKey, apiKeyKey, projectKey } from "../storage/kv_keys.ts";
import type { ProjectRecord } from "../storage/project_records.ts";
import type { ApiKeyHashEntry, ApiKeyRecord } from "../storage/api_key_records.ts";
import type { RecordCache } from "../storage/record_cache.ts";
import { hashesMatch, hashProjectKey } from "../projects/project_keys.ts";
import type { Access } from "./access.ts";
import { PROJECT_KEY_SCOPE } from "./key_scope.ts";
import { TenantTokens } from "./tenant_tokens.ts";

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
