/** Runs a validated request's action. */
import type { ServiceContext } from "../context.ts";
import type { ManageRequest } from "./request_schemas.ts";
import { createIndex } from "../actions/create_index.ts";
import { getIndex } from "../actions/get_index.ts";
import { listIndexes } from "../actions/list_indexes.ts";
import { deleteIndex } from "../actions/delete_index.ts";
import { addDocs } from "../actions/add_docs.ts";
import { deleteDocs } from "../actions/delete_docs.ts";
import { getDocs } from "../actions/get_docs.ts";
import { search } from "../actions/search.ts";

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
  }
}
