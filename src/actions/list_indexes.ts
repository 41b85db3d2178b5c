/** `listIndexes`: the indexes of the caller's project, all at once or page by page. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import { decodeCursor, encodeCursor, NEXT_CURSOR_HEADER } from "../api/page_cursor.ts";
import { ActionReply } from "../http/action_reply.ts";
import type { IndexRecord } from "../storage/index_records.ts";
import { indexesPrefix } from "../storage/kv_keys.ts";
import type { IndexView } from "../api/response_schemas.ts";
import { toIndexView } from "./index_view.ts";

/**
 * Returns the project's Index objects sorted by name: all of them, or `options.limit` after `options.cursor`, with
 * the next page's cursor in a header.
 */
export async function listIndexes(
  ctx: ServiceContext,
  request: RequestOf<"listIndexes">,
): Promise<IndexView[] | ActionReply> {
  const { limit, cursor } = request.options ?? {};
  const prefix = indexesPrefix(request.projectId);
  // "\0" is the least suffix, so names after the cursor's sort from there on.
  const selector = cursor === undefined ? { prefix } : { prefix, start: [...prefix, `${decodeCursor(cursor)}\0`] };
  const views: IndexView[] = [];
  for await (const entry of ctx.kv.list<IndexRecord>(selector)) {
    if (views.length === limit) {
      return ActionReply.json(views, { headers: { [NEXT_CURSOR_HEADER]: encodeCursor(views.at(-1)!.name) } });
    }
    views.push(toIndexView(entry.value));
  }
  return views;
}
