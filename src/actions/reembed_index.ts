/** `reembedIndex`: embeds every document of an index again, with its model's current version or another model. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import { ActionReply } from "../api/action_reply.ts";
import { ApiError } from "../api/api_error.ts";
import { indexNotFound } from "../api/index_errors.ts";
import { isExternalModel } from "../embedding/model_registry.ts";
import { readSettledIndex } from "../storage/index_records.ts";
import { checkedPassageSettings } from "../writes/index_embedding.ts";
import { enqueueJob } from "../jobs/enqueue_job.ts";
import { checkedNotify } from "../webhooks/notify_target.ts";
import { requestedModel } from "./model_spec.ts";
import { indexView } from "./index_view.ts";

/**
 * Queues the re-embedding and answers 202 with the index, `Updating`; 404 for an unknown index, 400 for an unknown or
 * external model (quire cannot compute an external model's vectors) or passage settings the new model cannot take,
 * 409 while another job runs on the index.
 */
export async function reembedIndex(ctx: ServiceContext, request: RequestOf<"reembedIndex">): Promise<ActionReply> {
  const { projectId, indexName } = request;
  // Re-embedding always runs as a queued job.
  const notify = checkedNotify({ wait: false, notify: request.options?.notify }, ctx.webhookHosts);
  const entry = await readSettledIndex(ctx.kv, projectId, indexName);
  if (entry.value === null) throw indexNotFound(indexName);
  const record = entry.value;
  const modelId = request.modelId ?? record.modelId;
  const spec = requestedModel(ctx, modelId);
  const current = ctx.embedder.spec(record.modelId);
  if (current !== undefined && isExternalModel(current) || isExternalModel(spec)) {
    const external = isExternalModel(spec) ? modelId : record.modelId;
    throw new ApiError(
      400,
      `Index "${indexName}" cannot be re-embedded by quire: model "${external}" is external, so only clients can ` +
        'compute its vectors; send the documents again with their "vector" instead',
    );
  }
  if (record.passages !== undefined && modelId !== record.modelId) {
    await checkedPassageSettings(ctx, modelId, record.passages);
  }
  const queued = await enqueueJob(ctx, {
    kind: "reembed",
    projectId,
    indexName,
    docs: [],
    upsert: true,
    modelId,
    notify,
  });
  return ActionReply.json(await indexView(ctx, queued), { status: 202 });
}
