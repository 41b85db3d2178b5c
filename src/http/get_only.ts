/** The method check of the read-only paths (health probes, the API description). */

/** A 405 naming GET and HEAD for any other method; null for GET and HEAD. */
export function rejectUnlessGet(request: Request): Response | null {
  if (request.method === "GET" || request.method === "HEAD") return null;
  return Response.json({ error: `Method ${request.method} is not allowed: use GET` }, {
    status: 405,
    headers: { allow: "GET, HEAD" },
  });
}
