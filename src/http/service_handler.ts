/**
 * The outermost handler: routes the health probes, `/` and `/openapi.json`, `/metrics` and `/manage`, answers CORS
 * preflights, gives every response an `x-request-id`, and counts and logs every request.
 */
import type { ServiceContext } from "../context.ts";
import type { RequestLog } from "../observability/request_log.ts";
import { requestIdOf } from "../observability/request_id.ts";
import { errorResponse } from "./api_error.ts";
import { allowedOrigin, allowOrigin, type CorsPolicy, isPreflight, preflightResponse } from "./cors.ts";
import { createDocsResponder } from "./docs_handler.ts";
import { healthResponse } from "./health_handler.ts";
import { pathnameOf } from "./pathname.ts";
import { createManageHandler, type HandlerOptions, type RequestFacts } from "./manage_handler.ts";
import { createMetricsHandler } from "./metrics_handler.ts";

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
  const manage = createManageHandler(ctx, options);
  const metrics = createMetricsHandler(ctx, options.metricsToken);
  const docs = createDocsResponder(ctx.limits);
  return async (request, info) => {
    const started = performance.now();
    const requestId = requestIdOf(request);
    const facts: RequestFacts = { pathname: pathnameOf(request.url) };
    // Not /metrics: a page that a browser on the server's own host opens must not read it.
    const origin = facts.pathname === "/metrics" ? null : allowedOrigin(options.cors, request);
    // A label of the request for metrics and the log: from a small fixed set, never a raw string of the client's.
    let label: string | undefined;
    let response: Response;
    try {
      if (origin !== null && isPreflight(request)) {
        label = "preflight";
        response = preflightResponse(origin);
      } else {
        const special = healthResponse(ctx, request, facts.pathname) ?? docs(request, facts.pathname) ??
          (facts.pathname === "/metrics" ? metrics(request, info.remoteAddr) : null);
        if (special !== null) label = facts.pathname === "/" ? "root" : facts.pathname.slice(1);
        response = await (special ?? manage(request, facts));
      }
    } catch (error) {
      response = errorResponse(error);
    }
    response.headers.set("x-request-id", requestId);
    if (origin !== null) allowOrigin(response, origin);
    const ms = performance.now() - started;
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
