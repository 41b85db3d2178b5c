/** `listIndexes`: the indexes of the caller's project, all at once or page by page. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import type { IndexView } from "../api/response_schemas.ts";
import { decodeCursor, encodeCursor, NEXT_CURSOR_HEADER } from "../api/page_cursor.ts";
import { ActionReply } from "../api/action_reply.ts";
import { listIndexRecords } from "../storage/index_records.ts";
import { indexView } from "./index_view.ts";
import { allowsIndex, type KeyScope } from "../keys/key_scope.ts";

/**
 * Returns the project's Index objects within the caller's `scope`, each as `shown` shows it, sorted by name: all of
 * them, or `options.limit` after `options.cursor`, with the next page's cursor in a header.
 */
export async function listIndexes(
  ctx: ServiceContext,
  request: RequestOf<"listIndexes">,
  scope: Pick<KeyScope, "indexes">,
  shown: (view: IndexView) => IndexView = (view) => view,
): Promise<IndexView[] | ActionReply> {
  const { limit, cursor } = request.options ?? {};
  const after = cursor === undefined ? undefined : decodeCursor(cursor);
  const views: IndexView[] = [];
  for await (const record of listIndexRecords(ctx.kv, { projectId: request.projectId, after })) {
    if (!allowsIndex(scope, record.name)) continue;
    if (views.length === limit) {
      return ActionReply.json(views, { headers: { [NEXT_CURSOR_HEADER]: encodeCursor(views.at(-1)!.name) } });
    }
    views.push(shown(await indexView(ctx, record)));
  }
  return views;
}
