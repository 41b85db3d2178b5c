/**
 * Project records in Deno KV: read, insert, list, replace the key hash, delete with their indexes, deleted indexes,
 * aliases, keys, webhook secret and search analytics.
 */
import {
  aliasesPrefix,
  deletedIndexesPrefix,
  indexesPrefix,
  projectKey,
  projectKeyHashKey,
  projectsPrefix,
  trashKey,
  webhookSecretKey,
} from "./kv_keys.ts";
import type { DeletedIndex, IndexRecord, TrashMarker } from "./index_records.ts";
import { deleteProjectApiKeys } from "./api_key_records.ts";
import { deleteProjectAnalytics } from "./analytics_records.ts";

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

/** Stores a new project with its key hash index; false when the id is taken. */
export async function insertProject(kv: Deno.Kv, record: ProjectRecord): Promise<boolean> {
  const key = projectKey(record.id);
  const commit = kv.atomic().check({ key, versionstamp: null }).set(key, record);
  return (await commit.set(projectKeyHashKey(record.keyHash), record.id).commit()).ok;
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
    const commit = kv.atomic().check(entry).set(entry.key, { ...entry.value, keyHash });
    await dropKeyHash(kv, commit, entry.value);
    if ((await commit.set(projectKeyHashKey(keyHash), projectId).commit()).ok) return true;
  }
}

/**
 * Adds to `commit` the deletion of `project`'s key hash index entry, checked, unless the entry names another project
 * (a key given at creation, as the testing harness gives, may be another project's too).
 */
async function dropKeyHash(kv: Deno.Kv, commit: Deno.AtomicOperation, project: ProjectRecord): Promise<void> {
  const hashEntry = await kv.get<string>(projectKeyHashKey(project.keyHash));
  commit.check(hashEntry);
  if (hashEntry.value === project.id) commit.delete(hashEntry.key);
}

/**
 * Deletes a project, its keys, its indexes and their search analytics; the indexes' data is marked as garbage for
 * collection. Returns false if no such project.
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
  // A project made later under the same id must not sign its events with this one's secret, nor read its searches.
  await kv.delete(webhookSecretKey(projectId));
  await deleteProjectAnalytics(kv, projectId);
  for (;;) {
    const current = await kv.get<ProjectRecord>(projectKey(projectId));
    if (current.value === null) return true;
    const commit = kv.atomic().check(current).delete(current.key);
    await dropKeyHash(kv, commit, current.value);
    if ((await commit.commit()).ok) return true;
  }
}
