/**
 * Queued writes (`options.wait: false`): their documents are staged as JSON chunks, and a Deno KV queue message names
 * them. The message is enqueued in the same atomic commit that marks the index record as building or updating, so a
 * job exists exactly when the record says so, and a restart resumes it.
 */
import type { DocInput } from "../api/request_schemas.ts";
import type { IndexRecord } from "./index_records.ts";
import { aliasKey, indexKey, jobChunkKey, jobPrefix, runningJobKey, runningJobsPrefix } from "./kv_keys.ts";
import { deleteTrees, readChunks, writeChunks } from "./kv_batches.ts";

/** The queue message of a job. */
export interface IndexJobMessage {
  kind: "indexJob";
  projectId: string;
  indexName: string;
  indexId: string;
  jobId: string;
  chunks: number;
  upsert: boolean;
  /** A re-embedding job's model; such a job stages no documents. */
  reembedModelId?: string;
  /** Where to POST the event of the job's end (`options.notify`), checked when the job was queued. */
  notify?: { url: string };
}

/** Whether a queue message is a job message. */
export function isIndexJobMessage(message: unknown): message is IndexJobMessage {
  if (typeof message !== "object" || message === null) return false;
  const m = message as Record<string, unknown>;
  return m.kind === "indexJob" && typeof m.projectId === "string" && typeof m.indexName === "string" &&
    typeof m.indexId === "string" && typeof m.jobId === "string" && typeof m.chunks === "number" &&
    typeof m.upsert === "boolean";
}

/** Stages a job's documents; returns the number of chunks. */
export async function stageJobDocs(kv: Deno.Kv, indexId: string, jobId: string, docs: DocInput[]): Promise<number> {
  return await writeChunks(
    kv,
    new TextEncoder().encode(JSON.stringify(docs, vectorsAsArrays)),
    (seq) => jobChunkKey(indexId, jobId, seq),
  );
}

/** A JSON replacer that writes a vector decoded from `vectorBase64` (a `Float32Array`) as the array of numbers it is. */
function vectorsAsArrays(_key: string, value: unknown): unknown {
  return value instanceof Float32Array ? Array.from(value) : value;
}

/** Reads a job's staged documents; null when they are gone (the job finished, or its index was deleted). */
export async function readJobDocs(kv: Deno.Kv, message: IndexJobMessage): Promise<DocInput[] | null> {
  const bytes = await readChunks(kv, message.chunks, (seq) => jobChunkKey(message.indexId, message.jobId, seq));
  return bytes === null ? null : JSON.parse(new TextDecoder().decode(bytes));
}

/** Deletes a job's staged documents. */
export async function deleteJobDocs(kv: Deno.Kv, indexId: string, jobId: string): Promise<void> {
  await deleteTrees(kv, [jobPrefix(indexId, jobId)]);
}

/**
 * Commits a queued job: the index `record` that names it, its queue message, and the same message where every instance
 * looks for jobs to take over, in one atomic commit, if the record is still `current` (null: if no record exists yet).
 * Returns whether it committed.
 */
export async function commitQueuedJob(
  kv: Deno.Kv,
  current: Deno.KvEntry<IndexRecord> | null,
  record: IndexRecord,
  message: IndexJobMessage,
): Promise<boolean> {
  const key = indexKey(record.projectId, record.name);
  // A new index's name must be free of indexes and aliases.
  const checks = current === null
    ? [{ key, versionstamp: null }, { key: aliasKey(record.projectId, record.name), versionstamp: null }]
    : [current];
  return (await kv.atomic().check(...checks).set(key, record).set(runningJobKey(record.id), message).enqueue(message)
    .commit()).ok;
}

/** Every running job's message, as {@link commitQueuedJob} left it for takeover. */
export async function* listRunningJobs(kv: Deno.Kv): AsyncGenerator<IndexJobMessage> {
  for await (const entry of kv.list<IndexJobMessage>({ prefix: runningJobsPrefix() })) {
    if (isIndexJobMessage(entry.value)) {
      yield entry.value;
      continue;
    }
    // Nothing can run it: its job, if any, fails over to the queue's redelivery, and the entry goes.
    console.warn(`Deleting an unreadable running-job entry ${JSON.stringify(entry.key)}`);
    await kv.atomic().check(entry).delete(entry.key).commit();
  }
}

/** Removes a finished job's takeover entry and staged documents. */
export async function clearJob(kv: Deno.Kv, indexId: string, jobId: string): Promise<void> {
  const entry = await kv.get<IndexJobMessage>(runningJobKey(indexId));
  if (entry.value?.jobId === jobId) {
    await kv.atomic().check(entry).delete(entry.key).commit();
  }
  await deleteJobDocs(kv, indexId, jobId);
}

/** Hands every job message of the store's queue to `run`; resolves when the store closes. */
export async function listenForJobs(kv: Deno.Kv, run: (message: IndexJobMessage) => Promise<void>): Promise<void> {
  await kv.listenQueue((message) => {
    if (isIndexJobMessage(message)) return run(message);
  });
}
