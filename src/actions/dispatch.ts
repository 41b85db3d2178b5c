/** Runs a validated request's action. */
import type { ServiceContext } from "../context.ts";
import type { ManageRequest } from "../api/request_schemas.ts";
import { createIndex } from "./create_index.ts";
import { getIndex } from "./get_index.ts";
import { listIndexes } from "./list_indexes.ts";
import { deleteIndex } from "./delete_index.ts";
import { addDocs } from "./add_docs.ts";
import { deleteDocs } from "./delete_docs.ts";
import { getDocs } from "./get_docs.ts";
import { search } from "./search.ts";
import { reembedIndex } from "./reembed_index.ts";
import { exportIndex } from "./export_index.ts";
import { ApiError } from "../api/api_error.ts";

/** Runs the action that `request` names and returns its success body. */
export function dispatch(ctx: ServiceContext, request: ManageRequest): Promise<unknown> {
  switch (request.action) {
    case "createIndex":
      return createIndex(ctx, request);
    case "getIndex":
      return getIndex(ctx, request);
    case "listIndexes":
      return listIndexes(ctx, request);
    case "deleteIndex":
      return deleteIndex(ctx, request);
    case "addDocs":
      return addDocs(ctx, request);
    case "deleteDocs":
      return deleteDocs(ctx, request);
    case "getDocs":
      return getDocs(ctx, request);
    case "search":
      return search(ctx, request);
    case "reembedIndex":
      return reembedIndex(ctx, request);
    case "exportIndex":
      return exportIndex(ctx, request);
    case "importIndex":
      // The documents follow the request in the body's later lines: only a JSON Lines body carries them.
      throw new ApiError(
        415,
        'importIndex takes Content-Type "application/x-ndjson": the request on the first line, then an export',
      );
  }
}
