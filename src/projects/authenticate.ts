/** Checks that the project exists and that the caller holds its key. */
import { ApiError } from "../api/api_error.ts";
import { PROJECT_ID_PATTERN } from "../api/project_id.ts";
import type { Metrics } from "../observability/metrics.ts";
import { projectKey } from "../storage/kv_keys.ts";
import type { ProjectRecord } from "../storage/project_records.ts";
import type { RecordCache } from "../storage/record_cache.ts";
import { hashesMatch, hashProjectKey } from "./project_keys.ts";

/** Hashes of recently presented keys are kept up to this many, so that a busy client's key is not hashed each time. */
const MAX_RECENT_HASHES = 1024;

/** Authenticates requests against the project records; failures are counted in the metrics and logged. */
export class Authenticator {
  readonly #records: RecordCache;
  readonly #metrics: Metrics;
  readonly #recentHashes = new Map<string, string>();

  constructor(records: RecordCache, metrics: Metrics) {
    this.#records = records;
    this.#metrics = metrics;
  }

  /** Resolves when `key` is the key of `projectId`; 404 for an unknown project, 403 for a wrong or missing key. */
  async authenticate(projectId: string, key: string | null): Promise<void> {
    // An id that no project can have is not looked up (a very long one would not even fit in a KV key).
    const project = PROJECT_ID_PATTERN.test(projectId)
      ? await this.#records.get<ProjectRecord>(projectKey(projectId))
      : null;
    if (project === null) throw this.#refuse(404, `Project "${projectId.slice(0, 128)}" not found`);
    if (key === null || key === "") throw this.#refuse(403, 'Missing header "x-project-key"');
    if (!hashesMatch(this.#hashOf(key), project.keyHash)) {
      throw this.#refuse(403, `Invalid "x-project-key" for project "${projectId}"`);
    }
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
