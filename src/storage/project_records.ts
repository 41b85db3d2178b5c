/**
 * Project records in Deno KV: read, insert, list, replace the key hash, delete with their indexes, deleted indexes,
 * aliases, keys and webhook secret.
 */
import {
  aliasesPrefix,
  deletedIndexesPrefix,
  indexesPrefix,
  projectKey,
  projectsPrefix,
  trashKey,
  webhookSecretKey,
} from "./kv_keys.ts";
import type { DeletedIndex, IndexRecord, TrashMarker } from "./index_records.ts";
import { deleteProjectApiKeys } from "./api_key_records.ts";

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

/** Stores a new project; false when the id is taken. */
export async function insertProject(kv: Deno.Kv, record: ProjectRecord): Promise<boolean> {
  const key = projectKey(record.id);
  return (await kv.atomic().check({ key, versionstamp: null }).set(key, record).commit()).ok;
}

/** Lists every project in id order. */
export async function listProjects(kv: Deno.Kv): Promise<ProjectRecord[]> {
  const projects: ProjectRecord[] = [];
  for await (const entry of kv.list<ProjectRecord>({ prefix: projectsPrefix() })) projects.push(entry.value);
  return projects;
}

/** Replaces a project's key hash, so that the old key stops working; false when there is no such project. */
export async function replaceProjectKeyHash(kv: Deno.Kv, projectId: string, keyHash: string): Promise<boolean> {
  for (;;) {
    const entry = await kv.get<ProjectRecord>(projectKey(projectId));
    if (entry.value === null) return false;
    const result = await kv.atomic().check(entry).set(entry.key, { ...entry.value, keyHash }).commit();
    if (result.ok) return true;
  }
}

/**
 * Deletes a project, its keys and its indexes; the indexes' data is marked as garbage for collection. Returns false if no such
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
  // Deleted indexes kept for undo, and aliases, go with their project: nothing can restore or name them any more.
  for await (const deleted of kv.list<DeletedIndex>({ prefix: deletedIndexesPrefix(projectId) })) {
    await kv.atomic().check(deleted).delete(deleted.key).set(trashKey(deleted.value.record.id), marker).commit();
  }
  for await (const alias of kv.list({ prefix: aliasesPrefix(projectId) })) await kv.delete(alias.key);
  await deleteProjectApiKeys(kv, projectId);
  // A project made later under the same id must not sign its events with this one's secret.
  await kv.delete(webhookSecretKey(projectId));
  await kv.delete(projectKey(projectId));
  return true;
}
