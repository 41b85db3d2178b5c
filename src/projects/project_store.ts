/** Projects in Deno KV: create, list, rotate a key, delete. */
import { generateProjectKey, hashProjectKey } from "./project_keys.ts";
import { PROJECT_ID_PATTERN } from "./project_id.ts";
import { indexesPrefix, projectKey, projectsPrefix, trashKey } from "../storage/kv_keys.ts";
import type { IndexRecord, TrashMarker } from "../storage/index_records.ts";

/** A project as stored; the key itself is never stored. */
export interface ProjectRecord {
  id: string;
  keyHash: string;
  createdAt: string;
}

/** Reads a project, or null when it does not exist. */
export async function getProject(kv: Deno.Kv, projectId: string): Promise<ProjectRecord | null> {
  return (await kv.get<ProjectRecord>(projectKey(projectId))).value;
}

/** Creates a project and returns its key, or null when the id is taken. */
export async function createProject(kv: Deno.Kv, projectId: string): Promise<string | null> {
  if (!PROJECT_ID_PATTERN.test(projectId)) {
    throw new RangeError(`Invalid project id "${projectId}": use 1-128 letters, digits, ".", "_" or "-"`);
  }
  const key = generateProjectKey();
  const record: ProjectRecord = {
    id: projectId,
    keyHash: hashProjectKey(key),
    createdAt: new Date().toISOString(),
  };
  const result = await kv.atomic().check({ key: projectKey(projectId), versionstamp: null })
    .set(projectKey(projectId), record).commit();
  return result.ok ? key : null;
}

/** Lists every project in id order. */
export async function listProjects(kv: Deno.Kv): Promise<ProjectRecord[]> {
  const projects: ProjectRecord[] = [];
  for await (const entry of kv.list<ProjectRecord>({ prefix: projectsPrefix() })) projects.push(entry.value);
  return projects;
}

/** Replaces a project's key, so that the old key stops working at once; returns the new key, or null if no project. */
export async function rotateProjectKey(kv: Deno.Kv, projectId: string): Promise<string | null> {
  const entry = await kv.get<ProjectRecord>(projectKey(projectId));
  if (entry.value === null) return null;
  const key = generateProjectKey();
  const result = await kv.atomic().check(entry).set(entry.key, { ...entry.value, keyHash: hashProjectKey(key) })
    .commit();
  return result.ok ? key : rotateProjectKey(kv, projectId);
}

/**
 * Deletes a project and its indexes; the indexes' data is marked as garbage for collection. Returns false if no such
 * project.
 */
export async function deleteProject(kv: Deno.Kv, projectId: string): Promise<boolean> {
  const entry = await kv.get<ProjectRecord>(projectKey(projectId));
  if (entry.value === null) return false;
  // Indexes go first: a crash halfway leaves a project with fewer indexes, never indexes that a project created
  // later under the same id would inherit.
  const marker: TrashMarker = { reason: "deleted", since: Date.now() };
  for await (const index of kv.list<IndexRecord>({ prefix: indexesPrefix(projectId) })) {
    await kv.atomic().check(index).delete(index.key).set(trashKey(index.value.id), marker).commit();
  }
  await kv.delete(projectKey(projectId));
  return true;
}
