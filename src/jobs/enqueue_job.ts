/** Accepts a `wait: false` write: stages its documents, marks the index, and enqueues the job. */
import type { ServiceContext } from "../context.ts";
import type { DocInput } from "../api/request_schemas.ts";
import type { NotifyOptions } from "../api/webhook_api_types.ts";
import { indexBusy, indexExists, indexNotFound, indexUpdating } from "../api/index_errors.ts";
import type { IndexJob, IndexRecord } from "../storage/index_records.ts";
import { readSettledIndex } from "../storage/index_records.ts";
import { indexKey } from "../storage/kv_keys.ts";
import { newTimedId } from "../storage/timed_id.ts";
import { commitQueuedJob, deleteJobDocs, type IndexJobMessage, stageJobDocs } from "../storage/job_docs.ts";
import { indexModelId } from "../writes/index_model.ts";
import { indexLockKey } from "../writes/index_write.ts";

/**
 * A write to queue: into an existing index (`add`), into the index that `record` creates (`create`), or every
 * document of an index embedded again with `modelId` (`reembed`).
 */
export type QueuedWrite =
  & { projectId: string; indexName: string; docs: DocInput[]; upsert: boolean; notify?: NotifyOptions | undefined }
  & ({ kind: "add" } | { kind: "create"; record: IndexRecord } | { kind: "reembed"; modelId: string });

/** Queues the write and returns the index record as it now is, naming the running job. */
export async function enqueueJob(ctx: ServiceContext, write: QueuedWrite): Promise<IndexRecord> {
  const { projectId, indexName } = write;
  return await ctx.indexLocks.run(indexLockKey(write), async () => {
    const current = write.kind === "create" ? null : await readSettledIndex(ctx.kv, projectId, indexName);
    if (current !== null) {
      if (current.value === null) throw indexNotFound(indexName);
      // Re-embedding is the way out of a model version that the server no longer runs.
      if (write.kind !== "reembed") indexModelId(ctx, current.value);
      if (current.value.job?.state === "running") throw indexUpdating(indexName);
    }
    const base = write.kind === "create" ? write.record : current!.value!;
    const job: IndexJob = {
      id: newTimedId(),
      kind: write.kind,
      state: "running",
      done: 0,
      total: write.kind === "reembed" ? base.docCount : write.docs.length,
    };
    const chunks = await stageJobDocs(ctx.kv, base.id, job.id, write.docs);
    const message: IndexJobMessage = {
      kind: "indexJob",
      projectId,
      indexName,
      indexId: base.id,
      jobId: job.id,
      chunks,
      upsert: write.upsert,
    };
    if (write.kind === "reembed") message.reembedModelId = write.modelId;
    if (write.notify !== undefined) message.notify = write.notify;
    const record: IndexRecord = { ...base, job };
    const committed = await commitQueuedJob(ctx.kv, current as Deno.KvEntry<IndexRecord> | null, record, message);
    ctx.records.invalidate(indexKey(projectId, indexName));
    if (!committed) {
      await deleteJobDocs(ctx.kv, base.id, job.id);
      throw write.kind === "create" ? indexExists(indexName) : indexBusy(indexName);
    }
    return record;
  });
}
