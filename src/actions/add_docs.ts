/** `addDocs`: upserts documents into an index, embedding only new or changed texts. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import type { AddDocsResult } from "../api/response_schemas.ts";
import { ActionReply } from "../api/action_reply.ts";
import { writeDocs } from "../writes/write_docs.ts";
import { enqueueJob } from "../jobs/enqueue_job.ts";
import { checkedNotify } from "../webhooks/notify_target.ts";
import { indexView } from "./index_view.ts";

/** Adds or replaces documents; 404 if the index is unknown. With `options.wait: false`, 202 and a queued job. */
export async function addDocs(
  ctx: ServiceContext,
  request: RequestOf<"addDocs">,
): Promise<AddDocsResult | ActionReply> {
  const { projectId, indexName, docs } = request;
  const upsert = request.options?.upsert ?? true;
  const notify = checkedNotify(request.options, ctx.webhookHosts);
  if (request.options?.wait === false) {
    const record = await enqueueJob(ctx, { projectId, indexName, docs, upsert, kind: "add", notify });
    return ActionReply.json(await indexView(ctx, record), { status: 202 });
  }
  return await writeDocs(ctx, { projectId, indexName, docs, upsert });
}
