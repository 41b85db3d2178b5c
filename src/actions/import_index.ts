/** `importIndex`: a new index from an `exportIndex` stream that follows the request in a JSON Lines body. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import type { IndexView } from "../api/response_schemas.ts";
import { importIndex as importLines, type ImportLine } from "../transfer/import_index.ts";
import { indexView } from "./index_view.ts";

/**
 * Creates the index from the export in `lines` and answers it as getIndex would; 409 when the name is taken, 400
 * naming the first malformed line, after which nothing is created.
 */
export async function importIndex(
  ctx: ServiceContext,
  request: RequestOf<"importIndex">,
  lines: AsyncIterable<ImportLine>,
): Promise<IndexView> {
  return await indexView(ctx, await importLines(ctx, request, lines));
}
