/** Checks that the project exists and that the caller holds its key. */
import type { RecordCache } from "../storage/record_cache.ts";
import { projectKey } from "../storage/kv_keys.ts";
import { ApiError } from "../http/api_error.ts";
import type { ProjectRecord } from "../projects/project_store.ts";
import { PROJECT_ID_PATTERN } from "../projects/project_id.ts";
import { verifyProjectKey } from "../projects/project_keys.ts";

/** Authentication failures since the process started, counted and logged (never with the key). */
let failures = 0;

/** Resolves when `key` is the key of `projectId`; 404 for an unknown project, 403 for a wrong or missing key. */
export async function authenticate(records: RecordCache, projectId: string, key: string | null): Promise<void> {
  // An id that no project can have is not looked up (a very long one would not even fit in a KV key).
  const project = PROJECT_ID_PATTERN.test(projectId) ? await records.get<ProjectRecord>(projectKey(projectId)) : null;
  if (project === null) throw refuse(404, `Project "${projectId.slice(0, 128)}" not found`);
  if (key === null || key === "") throw refuse(403, 'Missing header "x-project-key"');
  if (!verifyProjectKey(key, project.keyHash)) {
    throw refuse(403, `Invalid "x-project-key" for project "${projectId}"`);
  }
}

/** The number of authentication failures so far. */
export function authenticationFailures(): number {
  return failures;
}

function refuse(status: 403 | 404, message: string): ApiError {
  failures++;
  console.warn(`Authentication failure #${failures}: ${message}`);
  return new ApiError(status, message);
}
