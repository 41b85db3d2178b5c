/** The handler of `POST /manage`: checks in the documented order, then dispatches. */
import type { ServiceContext } from "../context.ts";
import { ACTIONS, describeIssue, isAction, requestSchema } from "../api/request_schemas.ts";
import { Authenticator } from "../projects/authenticate.ts";
import { dispatch } from "../actions/dispatch.ts";
import { ApiError } from "../api/api_error.ts";
import { errorResponse } from "./error_response.ts";
import { replyResponse } from "./reply_response.ts";
import { ProjectLimiter } from "./project_limiter.ts";
import { type BodyDeadlines, readJsonObject } from "./read_json_body.ts";
import type { RequestFacts, Route } from "./route.ts";

/** Options of the handler. */
export interface HandlerOptions {
  maxBodyBytes: number;
  bodyTimeoutMs: number;
  projectMaxConcurrency: number;
  /** The service's watch over body deadlines, stopped when it shuts down. */
  bodyDeadlines: BodyDeadlines;
}

/** Longest `action` echoed back in an error. */
const MAX_ECHOED_ACTION = 64;

/** The route of `POST /manage`. */
export function manageRoute(ctx: ServiceContext, options: HandlerOptions): Route {
  const schema = requestSchema(ctx.limits);
  const actionList = ACTIONS.map((action) => `"${action}"`).join(", ");
  const limiter = new ProjectLimiter(options.projectMaxConcurrency);
  const authenticator = new Authenticator(ctx.records, ctx.metrics);

  return { path: "/manage", handle };

  async function handle(request: Request, _info: Deno.ServeHandlerInfo, facts: RequestFacts): Promise<Response> {
    let action: string | undefined;
    let release: (() => void) | undefined;
    try {
      if (request.method !== "POST") {
        throw new ApiError(405, `Method ${request.method} is not allowed: use POST`, { headers: { allow: "POST" } });
      }
      const contentType = request.headers.get("content-type") ?? "";
      if (contentType.split(";")[0]!.trim().toLowerCase() !== "application/json") {
        throw new ApiError(415, 'Content-Type must be "application/json"');
      }
      const body = await readJsonObject(request, {
        maxBytes: options.maxBodyBytes,
        timeoutMs: options.bodyTimeoutMs,
        deadlines: options.bodyDeadlines,
      });
      if (typeof body.action === "string") action = body.action.slice(0, MAX_ECHOED_ACTION);
      if (typeof body.action === "string" && isAction(body.action)) facts.action = body.action;
      if (typeof body.projectId === "string") facts.projectId = body.projectId;
      if (typeof body.indexName === "string") facts.indexName = body.indexName;

      const version = request.headers.get("x-service-version");
      if (version !== "v1") {
        throw new ApiError(
          400,
          version === null
            ? 'Missing header "x-service-version": use "v1"'
            : `Unsupported x-service-version "${version}": use "v1"`,
        );
      }
      if (typeof body.projectId !== "string" || body.projectId === "") {
        throw new ApiError(400, 'Missing required field "projectId": expected a non-empty string');
      }
      await authenticator.authenticate(body.projectId, request.headers.get("x-project-key"));
      release = limiter.admit(body.projectId);

      if (typeof body.action !== "string" || !isAction(body.action)) {
        const named = typeof body.action === "string"
          ? `Unknown action "${action}"`
          : 'Missing required field "action"';
        throw new ApiError(400, `${named}: use one of ${actionList}`);
      }
      const parsed = schema.safeParse(body);
      if (!parsed.success) throw new ApiError(400, describeIssue(parsed.error));
      const result = await dispatch(ctx, parsed.data);
      return replyResponse(result);
    } catch (error) {
      return errorResponse(error, action);
    } finally {
      release?.();
    }
  }
}
