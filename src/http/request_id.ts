/** The id that ties a response and its log line to the request: the client's `x-request-id` when usable, else new. */

/** 1-128 visible ASCII characters: safe to echo in a header and to write into a log line. */
const USABLE_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** The request's `x-request-id` if it is 1-128 visible ASCII characters, otherwise a random UUID. */
export function requestIdOf(request: Request): string {
  const given = request.headers.get("x-request-id");
  return given !== null && USABLE_REQUEST_ID.test(given) ? given : crypto.randomUUID();
}
