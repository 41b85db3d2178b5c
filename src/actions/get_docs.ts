/** `getDocs`: stored documents without their vectors, by id, page by page, or all of them streamed. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import type { DocView } from "../api/response_schemas.ts";
import { decodeCursor, encodeCursor, NEXT_CURSOR_HEADER } from "../api/page_cursor.ts";
import { ActionReply } from "../api/action_reply.ts";
import { ApiError } from "../api/api_error.ts";
import { listDocs, readDocs } from "../storage/doc_records.ts";
import type { StoredDoc } from "../storage/doc_change_codec.ts";
import { readSettledIndex } from "../storage/index_records.ts";
import { indexNotFound } from "../api/index_errors.ts";
import type { MetadataFilter } from "../search/metadata_filter.ts";

/**
 * Returns the documents of `options.docIds` that exist, in the order asked; or one page of `options.limit` documents
 * in id order after `options.cursor`, with the next page's cursor in a header; or, without a limit, every document
 * (after the cursor) as a streamed array. With a tenant token's `tenantFilter`, only the documents it matches.
 */
export async function getDocs(
  ctx: ServiceContext,
  request: RequestOf<"getDocs">,
  tenantFilter?: MetadataFilter,
): Promise<DocView[] | ActionReply> {
  const entry = await readSettledIndex(ctx.kv, request.projectId, request.indexName);
  if (entry.value === null) throw indexNotFound(request.indexName);
  const indexId = entry.value.id;
  const { docIds, limit, cursor } = request.options ?? {};
  if (docIds !== undefined) {
    if (limit !== undefined || cursor !== undefined) {
      throw new ApiError(400, 'Invalid "options": "docIds" cannot be combined with "limit" or "cursor"');
    }
    return (await readDocs(ctx.kv, indexId, [...new Set(docIds)]))
      .filter(([, doc]) => tenantFilter?.(doc.metadata) ?? true)
      .map(([id, doc]) => toDocView(id, doc));
  }
  const after = cursor === undefined ? undefined : decodeCursor(cursor);
  const listed = listDocs(ctx.kv, indexId, after);
  const docs = tenantFilter === undefined ? listed : filterAsync(listed, ([, doc]) => tenantFilter(doc.metadata));
  if (limit === undefined) return ActionReply.jsonArray(mapAsync(docs, ([id, doc]) => toDocView(id, doc)));
  const page: DocView[] = [];
  for await (const [id, doc] of docs) {
    if (page.length === limit) {
      return ActionReply.json(page, { headers: { [NEXT_CURSOR_HEADER]: encodeCursor(page.at(-1)!.id) } });
    }
    page.push(toDocView(id, doc));
  }
  return page;
}

function toDocView(id: string, doc: StoredDoc): DocView {
  return doc.metadata === undefined ? { id, text: doc.text } : { id, text: doc.text, metadata: doc.metadata };
}

async function* filterAsync<T>(items: AsyncIterable<T>, keep: (item: T) => boolean): AsyncGenerator<T> {
  for await (const item of items) if (keep(item)) yield item;
}

async function* mapAsync<T, U>(items: AsyncIterable<T>, map: (item: T) => U): AsyncGenerator<U> {
  for await (const item of items) yield map(item);
}
