/** The dashboard's one way to the service: `POST /manage` with the session's project and key, as any client sends. */

const SESSION_KEY = "quire.session";

/** An error the API answered with, carrying its message and status. */
export class ApiError extends Error {
  constructor(status, message, retryAfter) {
    super(message);
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

/** The signed-in project and key, from this tab's sessionStorage (never localStorage, a cookie or the URL). */
export function readSession() {
  try {
    const session = JSON.parse(sessionStorage.getItem(SESSION_KEY) ?? "null");
    return typeof session?.projectId === "string" && typeof session?.key === "string" ? session : null;
  } catch {
    return null;
  }
}

/** Keeps the session for this tab only. */
export function saveSession(session) {
  sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
}

/** Forgets the key. */
export function forgetSession() {
  sessionStorage.removeItem(SESSION_KEY);
}

/**
 * Calls `action` as `session`'s project. Resolves to `{ data, nextCursor }`; rejects with an {@link ApiError} that
 * carries the API's own message.
 */
export async function manage(session, action, fields = {}) {
  let response;
  try {
    response = await fetch("/manage", {
      method: "POST",
      headers: requestHeaders(session.key),
      body: JSON.stringify({ action, projectId: session.projectId, ...fields }),
    });
  } catch {
    throw new ApiError(0, "The server cannot be reached");
  }
  // A body that is not JSON (a proxy's error page, say) leaves the status to tell what happened.
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const retryAfter = Number(response.headers.get("retry-after")) || undefined;
    throw new ApiError(response.status, data?.error ?? `The server answered ${response.status}`, retryAfter);
  }
  return { data, nextCursor: response.headers.get("x-next-cursor") ?? undefined };
}

/** The headers of a call to `/manage`, for `key`. */
export function requestHeaders(key) {
  return { "content-type": "application/json", "x-service-version": "v1", "x-project-key": key };
}

/** GETs a JSON document of the server (the probes, the dashboard's settings); its body even when not 2xx. */
export async function getJson(path) {
  const response = await fetch(path);
  return { status: response.status, data: await response.json().catch(() => null) };
}
