/** `createIndex`: a new index with its first documents, embedded and persisted. */
import { indexLockKey, type ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import { DEFAULT_MODEL_ID } from "../embedding/model_registry.ts";
import { ApiError } from "../http/api_error.ts";
import { createIndexRecord, type IndexRecord } from "../storage/index_records.ts";
import { indexKey } from "../storage/kv_keys.ts";
import { toStoredDocs } from "./stored_docs.ts";
import type { ActionReply } from "../http/action_reply.ts";
import { enqueueJob } from "../jobs/enqueue_job.ts";

/**
 * Creates the index; 409 if the name is taken, 400 for an unknown model. With `options.wait: false`, the index
 * exists at once, empty and `Building`, and a queued job adds the documents (202).
 */
export async function createIndex(ctx: ServiceContext, request: RequestOf<"createIndex">): Promise<true | ActionReply> {
  const { projectId, indexName, docs } = request;
  const modelId = request.modelId ?? DEFAULT_MODEL_ID;
  const spec = ctx.embedder.spec(modelId);
  if (spec === undefined) {
    const known = ctx.embedder.modelIds().map((id) => `"${id}"`).join(", ");
    throw new ApiError(400, `Unknown model "${modelId}": use one of ${known}`);
  }
  const now = new Date().toISOString();
  const record: IndexRecord = {
    id: crypto.randomUUID(),
    projectId,
    name: indexName,
    modelId,
    modelVersion: spec.version,
    revision: 1,
    docCount: docs.length,
    createdAt: now,
    updatedAt: now,
  };
  if (request.options?.wait === false) {
    return await enqueueJob(ctx, {
      projectId,
      indexName,
      docs,
      upsert: true,
      kind: "create",
      record: { ...record, docCount: 0 },
    });
  }
  return await ctx.indexLocks.run(indexLockKey(projectId, indexName), async () => {
    const taken = () => new ApiError(409, `Index "${indexName}" already exists`);
    if ((await ctx.kv.get(indexKey(projectId, indexName))).value !== null) throw taken();
    const stored = await toStoredDocs(ctx, modelId, docs, new Map());
    const changes = docs.map((doc, i) => ({ id: doc.id, doc: stored[i]!, previousParts: 0 }));
    if (!await createIndexRecord(ctx.kv, record, changes)) throw taken();
    ctx.records.invalidate(indexKey(projectId, indexName));
    ctx.snapshots.noteWrite({ projectId, indexName, indexId: record.id }, Infinity);
    return true as const;
  });
}
