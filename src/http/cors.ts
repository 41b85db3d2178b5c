/**
 * Cross-origin access for browsers. Keys and tenant tokens travel in a header, never in a cookie, so a page of another origin can only
 * act with a key its user gave it: allowing any origin (the default) lends nothing of anyone's. `CORS_ORIGINS` can
 * narrow it to a list of origins, or turn it off.
 */

/** Request headers a browser may send. */
const ALLOWED_HEADERS = "content-type, x-project-key, x-service-version, x-request-id, authorization, idempotency-key";
/** Response headers a page may read. */
const EXPOSED_HEADERS = "x-next-cursor, x-request-id, retry-after, idempotent-replayed";
/** How long a browser may reuse a preflight answer, in seconds. */
const PREFLIGHT_MAX_AGE = "86400";

/** Which origins may call: any (`*`), these, or none. */
export type CorsPolicy = "*" | ReadonlySet<string> | null;

/** Parses `CORS_ORIGINS`: `*`, `none`, or a comma-separated list of origins. */
export function corsPolicyOf(setting: string): CorsPolicy {
  if (setting === "none") return null;
  return setting === "*" ? "*" : new Set(setting.split(",").map((origin) => origin.trim()));
}

/** The origin a response may name in `Access-Control-Allow-Origin`, or null when the request gets no CORS. */
export function allowedOrigin(policy: CorsPolicy, request: Request): string | null {
  if (policy === null) return null;
  const origin = request.headers.get("origin");
  if (origin === null) return null;
  return policy === "*" ? "*" : policy.has(origin) ? origin : null;
}

/** Whether `request` is a CORS preflight. */
export function isPreflight(request: Request): boolean {
  return request.method === "OPTIONS" && request.headers.has("access-control-request-method");
}

/** The answer to a preflight from an allowed origin. */
export function preflightResponse(origin: string): Response {
  return new Response(null, {
    status: 204,
    headers: {
      "access-control-allow-origin": origin,
      "access-control-allow-methods": "GET, POST",
      "access-control-allow-headers": ALLOWED_HEADERS,
      "access-control-max-age": PREFLIGHT_MAX_AGE,
      vary: "origin",
    },
  });
}

/** Lets the page of `origin` read `response`. */
export function allowOrigin(response: Response, origin: string): void {
  response.headers.set("access-control-allow-origin", origin);
  response.headers.set("access-control-expose-headers", EXPOSED_HEADERS);
  response.headers.append("vary", "origin");
}
