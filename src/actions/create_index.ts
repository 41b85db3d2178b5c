/** `createIndex`: a new index with its first documents, embedded and persisted. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import { ActionReply } from "../api/action_reply.ts";
import { ApiError } from "../api/api_error.ts";
import { indexExists } from "../api/index_errors.ts";
import { DEFAULT_MODEL_ID } from "../embedding/model_registry.ts";
import { createIndexRecord, type IndexRecord, readIndexRecord } from "../storage/index_records.ts";
import { indexKey } from "../storage/kv_keys.ts";
import { toStoredDocs } from "../writes/stored_docs.ts";
import { indexLockKey } from "../writes/index_write.ts";
import { enqueueJob } from "../jobs/enqueue_job.ts";
import { toIndexView } from "./index_view.ts";

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
    const queued = await enqueueJob(ctx, {
      projectId,
      indexName,
      docs,
      upsert: true,
      kind: "create",
      record: { ...record, docCount: 0 },
    });
    return ActionReply.json(toIndexView(queued), { status: 202 });
  }
  return await ctx.indexLocks.run(indexLockKey(request), async () => {
    if (await readIndexRecord(ctx.kv, projectId, indexName) !== null) throw indexExists(indexName);
    const stored = await toStoredDocs(ctx, modelId, docs, new Map());
    const changes = docs.map((doc, i) => ({ id: doc.id, doc: stored[i]!, previousParts: 0 }));
    if (!await createIndexRecord(ctx.kv, record, changes)) throw indexExists(indexName);
    ctx.records.invalidate(indexKey(projectId, indexName));
    ctx.indexStates.noteCreated(record);
    return true as const;
  });
}
