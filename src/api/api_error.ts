/** The one error type that carries an HTTP status, and its mapping to a JSON response. */
import { isStoreBusy } from "../storage/store_busy.ts";

/** Options of an {@link ApiError}: the cause, and headers for the response. */
export interface ApiErrorOptions extends ErrorOptions {
  headers?: HeadersInit;
}

/** An error whose message is written for the client and answered with `status`. */
export class ApiError extends Error {
  readonly headers: HeadersInit | undefined;

  constructor(readonly status: number, message: string, options?: ApiErrorOptions) {
    super(message, options);
    this.name = "ApiError";
    this.headers = options?.headers;
  }
}

/**
 * Turns any thrown value into a JSON error response. An unexpected error becomes a generic 500; every 5xx is logged
 * once, with its cause, and the response never carries a stack.
 */
export function errorResponse(error: unknown, action?: string): Response {
  const known = error instanceof ApiError ? error : isStoreBusy(error) ? storeBusy(error) : undefined;
  const status = known?.status ?? 500;
  if (status >= 500) {
    console.error(`Request failed${action === undefined ? "" : ` (${action})`}:`, known?.cause ?? error);
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
