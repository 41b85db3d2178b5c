/**
 * Runs a queued write from the Deno KV queue: embeds its documents with progress on the index record, then commits
 * them like a synchronous `addDocs`, clearing the job in the same commit. A redelivered message whose job has
 * already finished (or whose index is gone) only cleans up.
 */
import type { ServiceContext } from "../context.ts";
import { ApiError } from "../api/api_error.ts";
import { type IndexJob, type IndexRecord, readSettledIndex, replaceIndexRecord } from "../storage/index_records.ts";
import { deleteJobDocs, type IndexJobMessage, readJobDocs } from "../storage/job_docs.ts";
import { writeDocs } from "../writes/write_docs.ts";

/** Attempts of a progress update before it is skipped (the next one, or the final commit, catches up). */
const PROGRESS_ATTEMPTS = 3;

/** Runs one job message to its end: done, failed, or found stale. */
export async function runIndexJob(ctx: ServiceContext, message: IndexJobMessage): Promise<void> {
  const { projectId, indexName, indexId, jobId } = message;
  const entry = await readSettledIndex(ctx.kv, projectId, indexName);
  if (entry.value?.id !== indexId || entry.value.job?.id !== jobId || entry.value.job.state !== "running") {
    await deleteJobDocs(ctx.kv, indexId, jobId);
    return;
  }
  const docs = await readJobDocs(ctx.kv, message);
  try {
    if (docs === null) throw new ApiError(500, "The queued documents are missing");
    await writeDocs(ctx, {
      projectId,
      indexName,
      docs,
      upsert: message.upsert,
      jobId,
      onProgress: (done) => updateJob(ctx, message, (job) => ({ ...job, done })),
    });
  } catch (error) {
    if (!(error instanceof ApiError)) throw error; // Storage trouble: the queue delivers the message again.
    if (error.status >= 500) console.error(`Job ${jobId} of index "${indexName}" failed:`, error.cause ?? error);
    await updateJob(ctx, message, (job) => ({ ...job, state: "failed", error: error.message }));
  }
  await deleteJobDocs(ctx.kv, indexId, jobId);
}

/** Changes the job on the index record, if the record still runs this job. */
async function updateJob(
  ctx: ServiceContext,
  message: IndexJobMessage,
  change: (job: IndexJob) => IndexJob,
): Promise<void> {
  for (let attempt = 0; attempt < PROGRESS_ATTEMPTS; attempt++) {
    const entry = await readSettledIndex(ctx.kv, message.projectId, message.indexName);
    const job = entry.value?.job;
    if (entry.value?.id !== message.indexId || job?.id !== message.jobId || job.state !== "running") return;
    const record: IndexRecord = { ...entry.value, job: change(job) };
    const committed = await replaceIndexRecord(ctx.kv, entry as Deno.KvEntry<IndexRecord>, record);
    ctx.records.invalidate(entry.key);
    if (committed) return;
  }
}
