/** `getDocs`: stored documents without their vectors. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import { listDocs, readDocs, type StoredDoc } from "../storage/doc_records.ts";
import { readSettledIndex } from "../storage/index_records.ts";
import { indexNotFound } from "./index_not_found.ts";

/** A document as `getDocs` returns it; `metadata` is absent when the document has none. */
export interface DocView {
  id: string;
  text: string;
  metadata?: Record<string, unknown>;
}

/** Returns all documents in id order, or those of `options.docIds` that exist, in the order asked. */
export async function getDocs(ctx: ServiceContext, request: RequestOf<"getDocs">): Promise<DocView[]> {
  const entry = await readSettledIndex(ctx.kv, request.projectId, request.indexName);
  if (entry.value === null) throw indexNotFound(request.indexName);
  const indexId = entry.value.id;
  const docIds = request.options?.docIds;
  if (docIds !== undefined) {
    return (await readDocs(ctx.kv, indexId, [...new Set(docIds)])).map(([id, doc]) => toDocView(id, doc));
  }
  const views: DocView[] = [];
  for await (const [id, doc] of listDocs(ctx.kv, indexId)) views.push(toDocView(id, doc));
  return views;
}

function toDocView(id: string, doc: StoredDoc): DocView {
  return doc.metadata === undefined ? { id, text: doc.text } : { id, text: doc.text, metadata: doc.metadata };
}
