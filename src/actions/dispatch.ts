/** Runs a validated request's action. */
import type { ServiceContext } from "../context.ts";
import type { ManageRequest } from "../api/request_schemas.ts";
import { createIndex } from "./create_index.ts";
import { getIndex } from "./get_index.ts";
import type { IndexView } from "../api/response_schemas.ts";
import { listIndexes } from "./list_indexes.ts";
import { deleteIndex } from "./delete_index.ts";
import { addDocs } from "./add_docs.ts";
import { deleteDocs } from "./delete_docs.ts";
import { getDocs } from "./get_docs.ts";
import { search } from "./search.ts";
import { multiSearch } from "./multi_search.ts";
import { reembedIndex } from "./reembed_index.ts";
import { exportIndex } from "./export_index.ts";
import { ApiError } from "../api/api_error.ts";
import { type Access, tenantFilterOf } from "../keys/access.ts";
import { createKey } from "./create_key.ts";
import { listKeys } from "./list_keys.ts";
import { deleteKey } from "./delete_key.ts";
import { getWebhookSecret } from "./get_webhook_secret.ts";
import { rotateWebhookSecret } from "./rotate_webhook_secret.ts";
import { deleteAlias, listAliases, setAlias } from "./aliases.ts";
import { listDeletedIndexes, restoreIndex } from "./deleted_indexes.ts";
import { updateSettings } from "./update_settings.ts";
import { recordClick, searchAnalytics } from "./search_analytics.ts";

/** Who asks: their rights, and the names of the index they asked for (an alias and its index). */
export interface Caller {
  access: Access;
  names: readonly string[];
}

/** Runs the action that `request` names for `caller`, and returns its success body. */
export function dispatch(ctx: ServiceContext, request: ManageRequest, caller: Caller): Promise<unknown> {
  const { access, names } = caller;
  const shown = access.tenantFilters === undefined ? (view: IndexView) => view : withoutPins;
  switch (request.action) {
    case "createIndex":
      return createIndex(ctx, request);
    case "getIndex":
      return getIndex(ctx, request).then(shown);
    case "listIndexes":
      return listIndexes(ctx, request, access.scope, shown);
    case "deleteIndex":
      return deleteIndex(ctx, request);
    case "addDocs":
      return addDocs(ctx, request);
    case "deleteDocs":
      return deleteDocs(ctx, request);
    case "getDocs":
      return getDocs(ctx, request, tenantFilterOf(access, names));
    case "search":
      return search(ctx, request, tenantFilterOf(access, names));
    case "multiSearch":
      return multiSearch(ctx, request, access);
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
    case "createKey":
      return createKey(ctx, request, access);
    case "listKeys":
      return listKeys(ctx, request, access);
    case "deleteKey":
      return deleteKey(ctx, request, access);
    case "getWebhookSecret":
      return getWebhookSecret(ctx, request);
    case "rotateWebhookSecret":
      return rotateWebhookSecret(ctx, request);
    case "setAlias":
      return setAlias(ctx, request, access);
    case "deleteAlias":
      return deleteAlias(ctx, request, access);
    case "listAliases":
      return listAliases(ctx, request, access.scope);
    case "restoreIndex":
      return restoreIndex(ctx, request);
    case "listDeletedIndexes":
      return listDeletedIndexes(ctx, request, access.scope);
    case "updateSettings":
      return updateSettings(ctx, request);
    case "searchAnalytics":
      return searchAnalytics(ctx, request);
    case "recordClick":
      return recordClick(ctx, request);
  }
}

/** An Index object as a tenant token sees it: pins name documents, which may lie outside the token's filter. */
function withoutPins(view: IndexView): IndexView {
  return { ...view, settings: { ...view.settings, pins: [] } };
}
