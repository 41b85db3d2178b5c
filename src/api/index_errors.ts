/** The errors of actions that name an index: not found, taken, or busy with other writers. */
import { ApiError } from "./api_error.ts";

/** A 404 for an unknown index. */
export function indexNotFound(indexName: string): ApiError {
  return new ApiError(404, `Index "${indexName}" not found`);
}

/** A 409 for a name that an index already has. */
export function indexExists(indexName: string): ApiError {
  return new ApiError(409, `Index "${indexName}" already exists`);
}

/** A 409 for a write that lost every race against other writers of the same index. */
export function indexBusy(indexName: string): ApiError {
  return new ApiError(409, `Index "${indexName}" is being changed by other writers: retry the request`);
}

/** A 409 for a queued write while another queued write still runs. */
export function indexUpdating(indexName: string): ApiError {
  return new ApiError(409, `Index "${indexName}" is already updating: retry once getIndex shows it "Ready"`);
}

/** A 409 for a deleteIndex while the index is being re-embedded: it waits for the swap to the new vectors. */
export function indexReembedding(indexName: string): ApiError {
  return new ApiError(
    409,
    `Index "${indexName}" is being re-embedded: it can be deleted once getIndex shows it "Ready" again`,
    { headers: { "retry-after": "5" } },
  );
}

/** A 507 for an index whose search state alone needs more memory than this instance's budget allows. */
export function indexTooLarge(indexName: string, bytes: number, budgetBytes: number): ApiError {
  const mb = (value: number) => Math.ceil(value / (1024 * 1024));
  return new ApiError(
    507,
    `Index "${indexName}" needs about ${mb(bytes)} MB of memory to search, more than this instance's ` +
      `SEARCH_CACHE_MB (${mb(budgetBytes)}) allows`,
  );
}
