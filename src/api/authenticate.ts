/** Checks that the project exists and that the caller holds its key. */
import { ApiError } from "../http/api_error.ts";
import { getProject } from "../projects/project_store.ts";
import { verifyProjectKey } from "../projects/project_keys.ts";

/** Resolves when `key` is the key of `projectId`; 404 for an unknown project, 403 for a wrong or missing key. */
export async function authenticate(kv: Deno.Kv, projectId: string, key: string | null): Promise<void> {
  const project = await getProject(kv, projectId);
  if (project === null) throw new ApiError(404, `Project "${projectId}" not found`);
  if (key === null || key === "") throw new ApiError(403, 'Missing header "x-project-key"');
  if (!await verifyProjectKey(key, project.keyHash)) {
    throw new ApiError(403, `Invalid "x-project-key" for project "${projectId}"`);
  }
}
