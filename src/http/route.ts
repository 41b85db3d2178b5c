/** The route table's rows: a path, how its requests are labelled, and the handler that answers it. */

/** What a handler learnt of a request, for its log line and metrics; filled in as the checks get to it. */
export interface RequestFacts {
  /** The requested action, once the body names a supported one. */
  action?: string;
  projectId?: string;
  indexName?: string;
}

/**
 * Answers one path; null to be answered as an unknown path (e.g. `/metrics` to a client that may not learn of it).
 */
export type RouteHandler = (
  request: Request,
  info: Deno.ServeHandlerInfo,
  facts: RequestFacts,
) => Response | Promise<Response> | null;

/** One row of the route table. */
export interface Route {
  path: string;
  /** From a small fixed set, as it becomes a metrics label; without one, the request is labelled by its action. */
  label?: string;
  handle: RouteHandler;
}
