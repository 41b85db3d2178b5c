/** Accepts a `wait: false` write: stages its documents, marks the index, enqueues the job, and answers 202. */
import { indexLockKey, type ServiceContext } from "../context.ts";
import type { DocInput } from "../api/request_schemas.ts";
import { ActionReply } from "../http/action_reply.ts";
import { ApiError } from "../http/api_error.ts";
import type { IndexJob, IndexRecord } from "../storage/index_records.ts";
import { readSettledIndex } from "../storage/index_records.ts";
import { indexKey } from "../storage/kv_keys.ts";
import { newTimedId } from "../storage/timed_id.ts";
import { toIndexView } from "../actions/index_view.ts";
import { indexNotFound } from "../actions/index_not_found.ts";
import { indexModelId } from "../actions/index_model.ts";
import { deleteJobDocs, type IndexJobMessage, stageJobDocs } from "./job_store.ts";

/** A write to queue: into an existing index (`add`), or into the index that `record` creates (`create`). */
export type QueuedWrite =
  & { projectId: string; indexName: string; docs: DocInput[]; upsert: boolean }
  & ({ kind: "add" } | { kind: "create"; record: IndexRecord });

/** Queues the write and answers 202 with the index as `getIndex` now shows it. */
export async function enqueueJob(ctx: ServiceContext, write: QueuedWrite): Promise<ActionReply> {
  const { projectId, indexName } = write;
  return await ctx.indexLocks.run(indexLockKey(projectId, indexName), async () => {
    const key = indexKey(projectId, indexName);
    const current = write.kind === "create" ? null : await readSettledIndex(ctx.kv, projectId, indexName);
    if (current !== null) {
      if (current.value === null) throw indexNotFound(indexName);
      indexModelId(ctx, current.value);
      if (current.value.job?.state === "running") {
        throw new ApiError(409, `Index "${indexName}" is already updating: retry once getIndex shows it "Ready"`);
      }
    }
    const base = write.kind === "create" ? write.record : current!.value!;
    const job: IndexJob = {
      id: newTimedId(),
      kind: write.kind,
      state: "running",
      done: 0,
      total: write.docs.length,
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
    const record: IndexRecord = { ...base, job };
    const check = current === null ? { key, versionstamp: null } : current as Deno.KvEntry<IndexRecord>;
    const result = await ctx.kv.atomic().check(check).set(key, record).enqueue(message).commit();
    ctx.records.invalidate(key);
    if (!result.ok) {
      await deleteJobDocs(ctx.kv, base.id, job.id);
      throw write.kind === "create"
        ? new ApiError(409, `Index "${indexName}" already exists`)
        : new ApiError(409, `Index "${indexName}" is being changed by other writers: retry the request`);
    }
    return ActionReply.json(toIndexView(record), { status: 202 });
  });
}
