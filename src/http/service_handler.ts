/**
 * The outermost handler: routes each path through one table (the probes, `/` and `/openapi.json`, `/metrics`,
 * `/manage` and the dashboard under `/ui`), answers CORS preflights, gives every response an `x-request-id` and a
 * `Server-Timing`, and counts and logs every request.
 */
import type { ServiceContext } from "../context.ts";
import { ApiError } from "../api/api_error.ts";
import type { RequestLog } from "../observability/request_log.ts";
import { requestIdOf } from "./request_id.ts";
import { errorResponse } from "./error_response.ts";
import { allowedOrigin, allowOrigin, type CorsPolicy, isPreflight, preflightResponse } from "./cors.ts";
import { dashboardRoutes } from "./dashboard_handler.ts";
import { docsRoutes } from "./docs_handler.ts";
import { healthRoutes } from "./health_handler.ts";
import { pathnameOf } from "./pathname.ts";
import { type HandlerOptions, manageRoute } from "./manage_handler.ts";
import { metricsRoute } from "./metrics_handler.ts";
import type { RequestFacts, Route } from "./route.ts";
import { asForeground } from "../util/time_slices.ts";

/** Options of the service handler. */
export interface ServiceHandlerOptions extends HandlerOptions {
  /** `METRICS_TOKEN`: when set, `/metrics` needs it as a bearer token from every client. */
  metricsToken?: string | undefined;
  /** Where request log lines go; none when `LOG_REQUESTS` is off. */
  log?: RequestLog | undefined;
  /** Which origins' pages may call (`CORS_ORIGINS`). */
  cors: CorsPolicy;
}

/** Builds the handler that `Deno.serve` runs. */
export function createServiceHandler(
  ctx: ServiceContext,
  options: ServiceHandlerOptions,
): (request: Request, info: Deno.ServeHandlerInfo) => Promise<Response> {
  const table: Route[] = [
    manageRoute(ctx, options),
    ...healthRoutes(ctx),
    ...docsRoutes(ctx.limits),
    metricsRoute(ctx, options.metricsToken),
    ...dashboardRoutes(ctx, options.maxBodyBytes),
  ];
  const routes = new Map(table.map((route) => [route.path, route]));
  return async (request, info) => {
    const started = performance.now();
    const requestId = requestIdOf(request);
    const pathname = pathnameOf(request.url);
    const facts: RequestFacts = {};
    // Not /metrics: a page that a browser on the server's own host opens must not read it.
    const origin = pathname === "/metrics" ? null : allowedOrigin(options.cors, request);
    // A label of the request for metrics and the log: from a small fixed set, never a raw string of the client's.
    let label: string | undefined;
    let response: Response;
    try {
      if (origin !== null && isPreflight(request)) {
        label = "preflight";
        response = preflightResponse(origin);
      } else {
        const route = routes.get(pathname);
        const answer = route?.handle(request, info, facts) ?? null;
        if (answer === null) throw new ApiError(404, `Not found: "${pathname}"; the API is POST /manage`);
        label = route!.label;
        response = await asForeground(() => answer);
      }
    } catch (error) {
      response = errorResponse(error);
    }
    response.headers.set("x-request-id", requestId);
    if (origin !== null) allowOrigin(response, origin);
    const ms = performance.now() - started;
    // The server's own time until the response (a streamed body's headers), for clients to split off the network's.
    response.headers.set("server-timing", `app;dur=${ms.toFixed(2)}`);
    const action = label ?? facts.action ?? "unknown";
    ctx.metrics.observeRequest(action, response.status, ms / 1000);
    options.log?.write({
      requestId,
      action,
      project: facts.projectId,
      index: facts.indexName,
      status: response.status,
      ms,
    });
    return response;
  };
}
