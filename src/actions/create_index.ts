/** `createIndex`: a new index with its first documents, embedded and persisted. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import { ActionReply } from "../api/action_reply.ts";
import { ApiError } from "../api/api_error.ts";
import { indexExists } from "../api/index_errors.ts";
import { DEFAULT_MODEL_ID, isExternalModel } from "../embedding/model_registry.ts";
import { DEFAULT_LANGUAGE } from "../fulltext/languages.ts";
import { passageTotal } from "../storage/doc_records.ts";
import { createIndexRecord, type IndexRecord, readIndexRecord } from "../storage/index_records.ts";
import { indexKey } from "../storage/kv_keys.ts";
import { StoredDocBuilder } from "../writes/stored_docs.ts";
import { checkDocVectors, checkedPassageSettings, indexEmbedding } from "../writes/index_embedding.ts";
import { indexLockKey } from "../writes/index_write.ts";
import { enqueueJob } from "../jobs/enqueue_job.ts";
import { checkedNotify } from "../webhooks/notify_target.ts";
import { indexView } from "./index_view.ts";
import { requestedModel } from "./model_spec.ts";

/**
 * Creates the index; 409 if the name is taken, 400 for an unknown model, passage settings the model cannot take, or
 * documents whose vectors do not fit it. With `options.wait: false`, the index
 * exists at once, empty and `Building`, and a queued job adds the documents (202).
 */
export async function createIndex(ctx: ServiceContext, request: RequestOf<"createIndex">): Promise<true | ActionReply> {
  const { projectId, indexName, docs } = request;
  const notify = checkedNotify(request.options, ctx.webhookHosts);
  const modelId = request.modelId ?? DEFAULT_MODEL_ID;
  const spec = requestedModel(ctx, modelId);
  const now = new Date().toISOString();
  const record: IndexRecord = {
    id: crypto.randomUUID(),
    projectId,
    name: indexName,
    modelId,
    modelVersion: spec.version,
    revision: 1,
    docCount: docs.length,
    passageCount: 0,
    language: request.options?.language ?? DEFAULT_LANGUAGE,
    createdAt: now,
    updatedAt: now,
  };
  const asked = request.options?.passages;
  if (asked !== undefined) {
    if (isExternalModel(spec)) {
      throw new ApiError(
        400,
        `Invalid "options.passages": model "${modelId}" is external, so each document brings one vector and its ` +
          "text is not split",
      );
    }
    record.passages = await checkedPassageSettings(ctx, modelId, asked);
  }
  await checkDocVectors(ctx, record, docs);
  if (request.options?.wait === false) {
    const queued = await enqueueJob(ctx, {
      projectId,
      indexName,
      docs,
      upsert: true,
      kind: "create",
      record: { ...record, docCount: 0 },
      notify,
    });
    return ActionReply.json(await indexView(ctx, queued), { status: 202 });
  }
  return await ctx.indexLocks.run(indexLockKey(request), async () => {
    if (await readIndexRecord(ctx.kv, projectId, indexName) !== null) throw indexExists(indexName);
    const stored = docs.length === 0
      ? []
      : await new StoredDocBuilder(ctx, await indexEmbedding(ctx, record)).build(docs);
    record.passageCount = passageTotal(stored);
    const changes = docs.map((doc, i) => ({ id: doc.id, doc: stored[i]!, previousParts: 0 }));
    if (!await createIndexRecord(ctx.kv, record, changes)) throw indexExists(indexName);
    ctx.records.invalidate(indexKey(projectId, indexName));
    ctx.indexStates.noteCreated(record);
    return true as const;
  });
}
