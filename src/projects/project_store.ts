/** Creating projects and rotating their keys: a fresh random key each time, of which only the hash is stored. */
import { PROJECT_ID_PATTERN } from "../api/project_id.ts";
import { insertProject, replaceProjectKeyHash } from "../storage/project_records.ts";
import { generateProjectKey, hashProjectKey } from "./project_keys.ts";

/**
 * Creates a project and returns its key (a fresh random one unless `key` is given), or null when the id is taken; a
 * RangeError for an invalid id.
 */
export async function createProject(
  kv: Deno.Kv,
  projectId: string,
  key: string = generateProjectKey(),
): Promise<string | null> {
  if (!PROJECT_ID_PATTERN.test(projectId)) {
    throw new RangeError(`Invalid project id "${projectId}": use 1-128 letters, digits, ".", "_" or "-"`);
  }
  const record = { id: projectId, keyHash: hashProjectKey(key), createdAt: new Date().toISOString() };
  return await insertProject(kv, record) ? key : null;
}

/** Replaces a project's key, so that the old key stops working; returns the new key, or null if no project. */
export async function rotateProjectKey(kv: Deno.Kv, projectId: string): Promise<string | null> {
  const key = generateProjectKey();
  return await replaceProjectKeyHash(kv, projectId, hashProjectKey(key)) ? key : null;
}
