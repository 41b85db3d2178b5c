/** The handler of `POST /manage`: checks in the documented order, then dispatches. */
import type { ServiceContext } from "../context.ts";
import { ACTIONS, describeIssue, isAction, requestSchema } from "../api/request_schemas.ts";
import { Authenticator } from "../keys/authenticate.ts";
import { authorizeRequest } from "../keys/authorize_request.ts";
import { KeyUsage } from "../keys/key_usage.ts";
import type { RateLimiter } from "../keys/rate_limiter.ts";
import { type IdempotentRequests, isIdempotencyKey } from "../idempotency/idempotent_requests.ts";
import { idempotentResponse } from "./idempotent_response.ts";
import { dispatch } from "../actions/dispatch.ts";
import { ApiError } from "../api/api_error.ts";
import { errorResponse } from "./error_response.ts";
import { replyResponse } from "./reply_response.ts";
import { ProjectLimiter } from "./project_limiter.ts";
import { readJsonObject } from "./read_json_body.ts";
import type { BodyDeadlines, BodyTimeouts } from "./body_chunks.ts";
import { type JsonLine, readJsonLines } from "./read_json_lines.ts";
import { importIndex } from "../actions/import_index.ts";
import type { RequestFacts, Route } from "./route.ts";

/** Options of the handler. */
export interface HandlerOptions {
  maxBodyBytes: number;
  /** The longest wait for a whole body (more for a large one, see `bodyChunks`). */
  bodyTimeoutMs: number;
  /** The longest wait for any one chunk of a body. */
  bodyIdleTimeoutMs: number;
  projectMaxConcurrency: number;
  /** The service's watch over body deadlines, stopped when it shuts down. */
  bodyDeadlines: BodyDeadlines;
  /** Counts rate-limited keys' requests; flushed when the service shuts down. */
  rateLimiter: RateLimiter;
  /** Idempotency keys' claims and answers. */
  idempotentRequests: IdempotentRequests;
}

/** The actions that take an `Idempotency-Key`; on the others, which change nothing, it is ignored. */
const WRITE_ACTIONS: readonly string[] = [
  "createIndex",
  "addDocs",
  "deleteDocs",
  "deleteIndex",
  "importIndex",
  "reembedIndex",
  "createKey",
  "deleteKey",
  "rotateWebhookSecret",
  "updateSettings",
];

/** The header that names the index a request ran on when its `indexName` was an alias. */
const INDEX_NAME_HEADER = "x-index-name";

/** The content type of an import's body. */
const JSON_LINES = "application/x-ndjson";

/** The longest first line of a JSON Lines body, the request, in characters. */
const MAX_FIRST_LINE_CHARS = 64 * 1024;

/** Longest `action` echoed back in an error. */
const MAX_ECHOED_ACTION = 64;

/** The route of `POST /manage`. */
export function manageRoute(ctx: ServiceContext, options: HandlerOptions): Route {
  const schema = requestSchema(ctx.limits);
  const actionList = ACTIONS.map((action) => `"${action}"`).join(", ");
  const limiter = new ProjectLimiter(options.projectMaxConcurrency);
  const authenticator = new Authenticator(ctx.records, ctx.metrics);
  const keyUsage = new KeyUsage(ctx.kv, ctx.background);
  const timeouts: BodyTimeouts = {
    timeoutMs: options.bodyTimeoutMs,
    idleTimeoutMs: options.bodyIdleTimeoutMs,
    deadlines: options.bodyDeadlines,
  };

  return { path: "/manage", handle };

  async function handle(request: Request, _info: Deno.ServeHandlerInfo, facts: RequestFacts): Promise<Response> {
    let action: string | undefined;
    let release: (() => void) | undefined;
    try {
      if (request.method !== "POST") {
        throw new ApiError(405, `Method ${request.method} is not allowed: use POST`, { headers: { allow: "POST" } });
      }
      const contentType = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
      if (contentType !== "application/json" && contentType !== JSON_LINES) {
        throw new ApiError(415, `Content-Type must be "application/json", or "${JSON_LINES}" for importIndex`);
      }
      // No byte of the body is read for a caller without a credential.
      const credentials = {
        key: request.headers.get("x-project-key"),
        authorization: request.headers.get("authorization"),
      };
      await authenticator.checkCredentials(credentials);

      // JSON Lines carry an import: the request on the first line, the export after it, read as the import goes.
      const lines = contentType === JSON_LINES
        ? readJsonLines(request.body, {
          ...timeouts,
          maxLineBytes: options.maxBodyBytes,
          maxFirstLineBytes: MAX_FIRST_LINE_CHARS,
        })
        : undefined;
      const body = lines === undefined
        ? await readJsonObject(request, { ...timeouts, maxBytes: options.maxBodyBytes })
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
      const access = await authenticator.authenticate(body.projectId, credentials);
      release = limiter.admit(body.projectId);
      if (access.keyId !== null) {
        if (access.scope.requestsPerMinute !== null) {
          await options.rateLimiter.admit(access.keyId, access.scope.requestsPerMinute, costOf(body));
        }
        keyUsage.record(body.projectId, access.keyId);
      }

      if (typeof body.action !== "string" || !isAction(body.action)) {
        const named = typeof body.action === "string"
          ? `Unknown action "${action}"`
          : body.action === undefined
          ? 'Missing required field "action"'
          : 'Invalid "action": expected a string';
        throw new ApiError(400, `${named}: use one of ${actionList}`);
      }
      const { names, target } = await authorizeRequest(ctx.records, access, {
        ...body,
        action: body.action,
        projectId: body.projectId,
      });
      const parsed = schema.safeParse(body);
      if (!parsed.success) throw new ApiError(400, describeIssue(parsed.error));
      // A request that names an alias runs on its index, and its answer names that index.
      const valid = target === undefined ? parsed.data : { ...parsed.data, indexName: target } as typeof parsed.data;
      if (lines !== undefined && valid.action !== "importIndex") {
        throw new ApiError(415, `Only importIndex takes "${JSON_LINES}": send ${action} as "application/json"`);
      }
      const run = () =>
        lines !== undefined && valid.action === "importIndex"
          ? importIndex(ctx, valid, lines)
          : dispatch(ctx, valid, { access, names });
      const named = (response: Response) => {
        if (target !== undefined) response.headers.set(INDEX_NAME_HEADER, target);
        return response;
      };
      const idempotencyKey = request.headers.get("idempotency-key");
      if (idempotencyKey === null || !WRITE_ACTIONS.includes(valid.action)) return named(replyResponse(await run()));
      if (!isIdempotencyKey(idempotencyKey)) {
        throw new ApiError(400, 'Invalid header "Idempotency-Key": use 1-255 printable ASCII characters');
      }
      const idempotent = {
        projectId: valid.projectId,
        key: idempotencyKey,
        credential: access.credential,
        request: JSON.stringify(body),
        action: valid.action,
      };
      return named(await idempotentResponse(options.idempotentRequests, idempotent, run));
    } catch (error) {
      return errorResponse(error, action);
    } finally {
      release?.();
    }
  }
}

/** What a request counts toward its key's rate: one, or for a `multiSearch` one for each query. */
function costOf(body: Record<string, unknown>): number {
  return body.action === "multiSearch" && Array.isArray(body.queries) ? Math.max(1, body.queries.length) : 1;
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
