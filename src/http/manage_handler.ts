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
import { type JsonLine, readJsonLines } from "./read_json_lines.ts";
import { importIndex } from "../actions/import_index.ts";
import type { RequestFacts, Route } from "./route.ts";

/** Options of the handler. */
export interface HandlerOptions {
  maxBodyBytes: number;
  bodyTimeoutMs: number;
  projectMaxConcurrency: number;
  /** The service's watch over body deadlines, stopped when it shuts down. */
  bodyDeadlines: BodyDeadlines;
}

/** The content type of an import's body. */
const JSON_LINES = "application/x-ndjson";

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
      const contentType = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
      // JSON Lines carry an import: the request on the first line, the export after it, read as the import goes.
      const lines = contentType === JSON_LINES ? readJsonLines(request.body, options.maxBodyBytes) : undefined;
      if (contentType !== "application/json" && lines === undefined) {
        throw new ApiError(415, `Content-Type must be "application/json", or "${JSON_LINES}" for importIndex`);
      }
      const body = lines === undefined
        ? await readJsonObject(request, {
          maxBytes: options.maxBodyBytes,
          timeoutMs: options.bodyTimeoutMs,
          deadlines: options.bodyDeadlines,
        })
        : await firstLineObject(lines);
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
        const named = body.projectId === undefined ? 'Missing required field "projectId"' : 'Invalid "projectId"';
        throw new ApiError(400, `${named}: expected a non-empty string`);
      }
      await authenticator.authenticate(body.projectId, request.headers.get("x-project-key"));
      release = limiter.admit(body.projectId);

      if (typeof body.action !== "string" || !isAction(body.action)) {
        const named = typeof body.action === "string"
          ? `Unknown action "${action}"`
          : body.action === undefined
          ? 'Missing required field "action"'
          : 'Invalid "action": expected a string';
        throw new ApiError(400, `${named}: use one of ${actionList}`);
      }
      const parsed = schema.safeParse(body);
      if (!parsed.success) throw new ApiError(400, describeIssue(parsed.error));
      if (lines !== undefined) {
        if (parsed.data.action !== "importIndex") {
          throw new ApiError(415, `Only importIndex takes "${JSON_LINES}": send ${action} as "application/json"`);
        }
        return replyResponse(await importIndex(ctx, parsed.data, lines));
      }
      const result = await dispatch(ctx, parsed.data);
      return replyResponse(result);
    } catch (error) {
      return errorResponse(error, action);
    } finally {
      release?.();
    }
  }
}

/** The first line of a JSON Lines body, which must be the request object. */
async function firstLineObject(lines: AsyncIterator<JsonLine>): Promise<Record<string, unknown>> {
  const first = await lines.next();
  const value = first.done ? undefined : first.value.value;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ApiError(400, "Line 1 must be the request: a JSON object naming the action, projectId and indexName");
  }
  return value as Record<string, unknown>;
}
