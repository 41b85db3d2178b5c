/**
 * The HTTP handler of the service: the read-only paths (health, API description), then `POST /manage`, checked in
 * the documented order and dispatched.
 */
import type { ServiceContext } from "../context.ts";
import { ACTIONS, describeIssue, isAction, requestSchema } from "../api/request_schemas.ts";
import { authenticate } from "../api/authenticate.ts";
import { dispatch } from "../api/dispatch.ts";
import { ApiError, errorResponse } from "./api_error.ts";
import { ActionReply } from "./action_reply.ts";
import { createDocsResponder } from "./docs_handler.ts";
import { healthResponse } from "./health_handler.ts";
import { ProjectLimiter } from "./project_limiter.ts";
import { readJsonObject } from "./read_json_body.ts";

/** Options of the handler. */
export interface HandlerOptions {
  maxBodyBytes: number;
  bodyTimeoutMs: number;
  projectMaxConcurrency: number;
}

/** Longest `action` echoed back in an error. */
const MAX_ECHOED_ACTION = 64;

/** Builds the request handler of the service. */
export function createManageHandler(
  ctx: ServiceContext,
  options: HandlerOptions,
): (request: Request) => Promise<Response> {
  const schema = requestSchema(ctx.limits);
  const actionList = ACTIONS.map((action) => `"${action}"`).join(", ");
  const limiter = new ProjectLimiter(options.projectMaxConcurrency);
  const docsResponse = createDocsResponder(ctx.limits);

  return async (request) => {
    let action: string | undefined;
    let release: (() => void) | undefined;
    try {
      const { pathname } = new URL(request.url);
      const health = healthResponse(ctx, request, pathname);
      if (health !== null) return await health;
      const docs = docsResponse(request, pathname);
      if (docs !== null) return docs;
      if (pathname !== "/manage") throw new ApiError(404, `Not found: "${pathname}"; the API is POST /manage`);
      if (request.method !== "POST") {
        throw new ApiError(405, `Method ${request.method} is not allowed: use POST`, { headers: { allow: "POST" } });
      }
      const contentType = request.headers.get("content-type") ?? "";
      if (contentType.split(";")[0]!.trim().toLowerCase() !== "application/json") {
        throw new ApiError(415, 'Content-Type must be "application/json"');
      }
      const body = await readJsonObject(request, { maxBytes: options.maxBodyBytes, timeoutMs: options.bodyTimeoutMs });
      if (typeof body.action === "string") action = body.action.slice(0, MAX_ECHOED_ACTION);

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
      await authenticate(ctx.records, body.projectId, request.headers.get("x-project-key"));
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
      return result instanceof ActionReply ? result.toResponse() : Response.json(result);
    } catch (error) {
      return errorResponse(error, action);
    } finally {
      release?.();
    }
  };
}
