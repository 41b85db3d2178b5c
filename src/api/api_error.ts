/** The one error type that carries an HTTP status; `src/http/error_response.ts` turns it into a response. */

/** Options of an {@link ApiError}: the cause, and headers for the response. */
export interface ApiErrorOptions extends ErrorOptions {
  headers?: Record<string, string>;
}

/** An error whose message is written for the client and answered with `status`. */
export class ApiError extends Error {
  readonly headers: Record<string, string> | undefined;

  constructor(readonly status: number, message: string, options?: ApiErrorOptions) {
    super(message, options);
    this.name = "ApiError";
    this.headers = options?.headers;
  }
}
