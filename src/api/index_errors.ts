/** The error of every action that names an index that does not exist. */
import { ApiError } from "../http/api_error.ts";

/** A 404 for an unknown index. */
export function indexNotFound(indexName: string): ApiError {
  return new ApiError(404, `Index "${indexName}" not found`);
}
