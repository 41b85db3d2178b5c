/** `listIndexes`: every index of the caller's project. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import type { IndexRecord } from "../storage/index_records.ts";
import { indexesPrefix } from "../storage/kv_keys.ts";
import { type IndexView, toIndexView } from "./index_view.ts";

/** Returns the project's Index objects sorted by name. */
export async function listIndexes(ctx: ServiceContext, request: RequestOf<"listIndexes">): Promise<IndexView[]> {
  const views: IndexView[] = [];
  for await (const entry of ctx.kv.list<IndexRecord>({ prefix: indexesPrefix(request.projectId) })) {
    views.push(toIndexView(entry.value));
  }
  return views;
}
