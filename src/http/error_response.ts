/** Maps any thrown value to a JSON error response. */
import { ApiError } from "../api/api_error.ts";
import { isStoreBusy } from "../storage/store_busy.ts";

/**
 * Turns any thrown value into a JSON error response. An unexpected error becomes a generic 500; every 5xx is logged
 * once, with its cause, and the response never carries a stack.
 */
export function errorResponse(error: unknown, action?: string): Response {
  const known = error instanceof ApiError ? error : isStoreBusy(error) ? storeBusy(error) : undefined;
  const status = known?.status ?? 500;
  if (status >= 500) {
    // A refusal of ours (507, or 500 naming the model) has its cause logged; one without a cause, its message.
    const logged = known === undefined ? error : known.cause ?? known.message;
    console.error(`Request failed${action === undefined ? "" : ` (${action})`}:`, logged);
  }
  const message = known?.message ?? "Internal server error";
  const body = action === undefined ? { error: message } : { error: message, action };
  return Response.json(body, { status, headers: known?.headers });
}

/** 503 for a store whose lock another process held past every retry: nothing broke, and a retry may succeed. */
function storeBusy(cause: unknown): ApiError {
  return new ApiError(503, "The store is busy with another process: retry shortly", {
    cause,
    headers: { "retry-after": "1" },
  });
}
