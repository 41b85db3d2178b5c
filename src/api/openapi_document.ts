/**
 * The OpenAPI 3.1 description of the service, generated from the zod schemas that validate requests (built for the
 * configured limits) and the zod schemas of the answers.
 */
import { z } from "zod";
import type { Limits } from "./request_schemas.ts";
import { type Action, ACTIONS, requestSchema } from "./request_schemas.ts";
import { searchAnalyticsResultSchema } from "./analytics_schemas.ts";
import {
  acknowledgedSchema,
  addDocsResultSchema,
  aliasListSchema,
  createdKeySchema,
  deletedIndexListSchema,
  deleteDocsResultSchema,
  docListSchema,
  docViewSchema,
  errorSchema,
  exportLinesSchema,
  federatedSearchResultSchema,
  healthSchema,
  indexListSchema,
  indexSchema,
  keyListSchema,
  multiSearchResponseSchema,
  multiSearchResultSchema,
  queryErrorSchema,
  readinessSchema,
  RESPONSE_SCHEMAS,
  searchHitSchema,
  searchResultSchema,
  serviceInfoSchema,
} from "./response_schemas.ts";
import { NEXT_CURSOR_HEADER } from "./page_cursor.ts";
import { webhookEventSchema, webhookSecretSchema } from "./webhook_schemas.ts";
import { openApiWebhooks } from "./openapi_webhooks.ts";

/** A JSON object of the document. */
type Json = Record<string, unknown>;

/** The error statuses of `POST /manage`, each with the conditions that answer it. */
const MANAGE_ERROR_STATUSES: Record<string, string> = {
  "400": "Bad JSON, a missing or unsupported x-service-version, a missing projectId, an unknown action, an invalid " +
    "field (the message names field and element), an unknown modelId, passage settings the model cannot take, a " +
    "vector of the wrong length (the message names the document and the dimensions), a query longer than the model " +
    "reads, reembedIndex on an external model, or an options.notify URL that WEBHOOK_ALLOWED_HOSTS does not allow " +
    "(or on a write that is not queued)",
  "403": "The x-project-key is not a key of that project, or it expired or was deleted; the tenant token does not " +
    "verify (signature, kid, exp, alg) or grants more than its key; or the key or token may not use the action or " +
    "the index (the message names which, and never whether the index exists)",
  "404": "The project does not exist, or the index is unknown, or the document of a search's similarTo",
  "405": "A method other than POST; the Allow header says POST",
  "408": "The body took longer than BODY_TIMEOUT_MS to arrive",
  "409":
    "A request with the same Idempotency-Key is still running (retry after Retry-After seconds), the index name is taken, a queued write is still running, the index is being re-embedded (retry after " +
    "Retry-After seconds), the index's model version is no longer served (reembedIndex is the way out), or " +
    "concurrent writers kept winning the race (retry)",
  "413": "The body is larger than MAX_BODY_BYTES",
  "415": 'Content-Type is not "application/json"',
  "422": "The Idempotency-Key was used for a different request",
  "429": "The project has PROJECT_MAX_CONCURRENCY requests in flight, or the key passed its requestsPerMinute; retry " +
    "after Retry-After seconds",
  "500": "Embedding or storage failed; the message says only what failed",
  "503": "Another process sharing the store held its lock past every retry; retry after Retry-After seconds",
  "507": "search: the index alone needs more memory than this instance's SEARCH_CACHE_MB; the message names the budget",
};

/** The header that ties every response to its request and its log line. */
const REQUEST_ID_HEADER = "x-request-id";

/** Named response schemas, as they appear under `components.schemas`. */
const RESPONSE_COMPONENTS = new Map<z.ZodType, string>([
  [acknowledgedSchema, "Acknowledged"],
  [indexSchema, "Index"],
  [indexListSchema, "IndexList"],
  [docViewSchema, "Document"],
  [docListSchema, "DocumentList"],
  [addDocsResultSchema, "AddDocsResult"],
  [deleteDocsResultSchema, "DeleteDocsResult"],
  [searchHitSchema, "SearchHit"],
  [searchResultSchema, "SearchResult"],
  [queryErrorSchema, "QueryError"],
  [multiSearchResultSchema, "MultiSearchResults"],
  [federatedSearchResultSchema, "FederatedSearchResult"],
  [multiSearchResponseSchema, "MultiSearchResult"],
  [errorSchema, "Error"],
  [healthSchema, "Health"],
  [readinessSchema, "Readiness"],
  [serviceInfoSchema, "ServiceInfo"],
  [exportLinesSchema, "IndexExport"],
  [createdKeySchema, "CreatedKey"],
  [keyListSchema, "KeyList"],
  [webhookSecretSchema, "WebhookSecret"],
  [webhookEventSchema, "WebhookEvent"],
  [aliasListSchema, "AliasList"],
  [deletedIndexListSchema, "DeletedIndexList"],
  [searchAnalyticsResultSchema, "SearchAnalytics"],
]);

/** Where a component schema is referenced from. */
function schemaRef(name: string): { $ref: string } {
  return { $ref: `#/components/schemas/${name}` };
}

/** `createIndex` → `CreateIndex`, the stem of an action's request and response components. */
function componentStem(action: Action): string {
  return action[0]!.toUpperCase() + action.slice(1);
}

function responseComponent(schema: z.ZodType): string {
  const name = RESPONSE_COMPONENTS.get(schema);
  if (name === undefined) throw new Error("A response schema has no component name");
  return name;
}

/**
 * The component schemas: `ManageRequest` (a union discriminated on `action`), one `<Action>Request` and
 * `<Action>Response` per action, `ManageResponse`, and the named answer and error schemas.
 */
function componentSchemas(limits: Limits): Record<string, Json> {
  const registry = z.registry<{ id: string }>();
  const manageRequest = requestSchema(limits);
  registry.add(manageRequest, { id: "ManageRequest" });
  for (const option of manageRequest.options) {
    registry.add(option, { id: `${componentStem(option.shape.action.value)}Request` });
  }
  for (const [schema, id] of RESPONSE_COMPONENTS) registry.add(schema, { id });
  // "input": the JSON on the wire, before any transform; a response is the input of the client's parse.
  const { schemas } = z.toJSONSchema(registry, {
    io: "input",
    unrepresentable: "any",
    uri: (id) => schemaRef(id).$ref,
  });
  const components: Record<string, Json> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    // A component is addressed by its place in the document, not by an $id of its own.
    const { $schema: _dialect, $id: _id, ...rest } = schema as Json;
    components[id] = rest;
  }
  components.ManageRequest = {
    ...components.ManageRequest,
    discriminator: {
      propertyName: "action",
      mapping: Object.fromEntries(ACTIONS.map((action) => [action, schemaRef(`${componentStem(action)}Request`).$ref])),
    },
  };
  for (const action of ACTIONS) {
    components[`${componentStem(action)}Response`] = {
      ...schemaRef(responseComponent(RESPONSE_SCHEMAS[action])),
      description: `The 200 body of ${action}`,
    };
  }
  components.ManageResponse = {
    description: "The 200 body: the <Action>Response of the request's action",
    anyOf: ACTIONS.map((action) => schemaRef(`${componentStem(action)}Response`)),
  };
  return components;
}

function jsonContent(schema: Json): Json {
  return { "application/json": { schema } };
}

const requestIdRef = { $ref: "#/components/headers/RequestId" };
const serverTimingRef = { $ref: "#/components/headers/ServerTiming" };

function errorResponses(): Record<string, Json> {
  return Object.fromEntries(
    Object.entries(MANAGE_ERROR_STATUSES).map(([status, description]) => {
      const headers: Json = { [REQUEST_ID_HEADER]: requestIdRef, "server-timing": serverTimingRef };
      if (status === "409" || status === "429" || status === "503") {
        headers["retry-after"] = {
          description: "Seconds to wait before retrying",
          schema: { type: "integer", minimum: 1 },
        };
      }
      if (status === "405") headers.allow = { description: "POST", schema: { type: "string" } };
      return [status, { description, headers, content: jsonContent(schemaRef("Error")) }];
    }),
  );
}

const MANAGE_DESCRIPTION = `Runs the action named by the body's \`action\` on the project named by its \`projectId\`.
The body is one of the \`<Action>Request\` schemas, and a 200 answers with the matching \`<Action>Response\`.
The checks run in a fixed order (path, method, Content-Type, body size and JSON, x-service-version, projectId,
project, key, action and fields, then the action itself), and the first that fails answers.
listIndexes and getDocs page with \`options.limit\` and \`options.cursor\`: while more items follow, the
\`${NEXT_CURSOR_HEADER}\` header holds the cursor of the next page.`;

function getOperation(operationId: string, summary: string, schema: string, extra: Record<string, Json> = {}): Json {
  return {
    get: {
      operationId,
      summary,
      security: [],
      responses: { "200": { description: summary, content: jsonContent(schemaRef(schema)) }, ...extra },
    },
  };
}

/** Builds the OpenAPI 3.1 document of the service for the configured limits. */
export function openApiDocument(limits: Limits, version: string): Json {
  return {
    openapi: "3.1.0",
    info: {
      title: "quire",
      version,
      description: "Searchable document indexes for many projects behind one authenticated endpoint, POST /manage.",
      license: { name: "MIT", identifier: "MIT" },
    },
    // Relative: the document describes the server that serves it, wherever that is.
    servers: [{ url: "/", description: "The server that serves this document" }],
    paths: {
      "/manage": {
        post: {
          operationId: "manage",
          summary: `Run one action: ${ACTIONS.join(", ")}`,
          description: MANAGE_DESCRIPTION,
          security: [{ projectKey: [] }, { tenantToken: [] }],
          parameters: [{
            name: "x-service-version",
            in: "header",
            required: true,
            description: "The API version",
            schema: { type: "string", enum: ["v1"] },
          }, {
            name: REQUEST_ID_HEADER,
            in: "header",
            required: false,
            description: "An id for this request, echoed in the response and the log line when it is 1-128 visible " +
              "ASCII characters; otherwise the server makes one",
            schema: { type: "string", pattern: "^[\\x21-\\x7e]{1,128}$" },
          }, {
            name: "idempotency-key",
            in: "header",
            required: false,
            description: "Write actions only: a repeat of the same request with this key within 24 hours answers the " +
              "first answer again (Idempotent-Replayed: true) and changes nothing; another request with it is 422",
            schema: { type: "string", pattern: "^[\\x20-\\x7e]{1,255}$" },
          }],
          requestBody: {
            required: true,
            content: {
              ...jsonContent(schemaRef("ManageRequest")),
              "application/x-ndjson": {
                schema: {
                  type: "string",
                  description: "importIndex only: the ImportIndexRequest object on the first line, then an " +
                    "exportIndex stream (IndexExport)",
                },
              },
            },
          },
          responses: {
            "200": {
              description: "The action succeeded",
              headers: {
                [REQUEST_ID_HEADER]: requestIdRef,
                "server-timing": serverTimingRef,
                [NEXT_CURSOR_HEADER]: {
                  description: "listIndexes and getDocs with options.limit: the options.cursor of the next page; " +
                    "absent on the last page",
                  schema: { type: "string" },
                },
                "idempotent-replayed": {
                  description:
                    '"true" when this is the kept answer of an earlier request with the same Idempotency-Key',
                  schema: { type: "string", enum: ["true"] },
                },
              },
              content: {
                ...jsonContent(schemaRef("ManageResponse")),
                "application/x-ndjson": { schema: schemaRef("IndexExport") },
              },
            },
            "202": {
              description: "createIndex or addDocs with options.wait false, and reembedIndex: the job is queued; " +
                "the index as getIndex now shows it",
              headers: { [REQUEST_ID_HEADER]: requestIdRef, "server-timing": serverTimingRef },
              content: jsonContent(schemaRef("Index")),
            },
            ...errorResponses(),
          },
        },
      },
      "/": getOperation("getServiceInfo", "Where to find the API and this document", "ServiceInfo"),
      "/openapi.json": {
        get: {
          operationId: "getOpenApiDocument",
          summary: "This document",
          security: [],
          responses: {
            "200": {
              description: "The OpenAPI 3.1 document",
              content: jsonContent({ type: "object", additionalProperties: {} }),
            },
          },
        },
      },
      "/healthz": getOperation("getHealth", "Liveness: the process answers", "Health"),
      "/readyz": getOperation("getReadiness", "Readiness: the store answers and the default model loads", "Readiness", {
        "503": { description: "A part did not answer within 2 s", content: jsonContent(schemaRef("Readiness")) },
      }),
      "/metrics": {
        get: {
          operationId: "getMetrics",
          summary: "Prometheus metrics: requests, latencies, embedding, indexes and docs per project, KV conflicts",
          description: "Open to loopback clients only, unless METRICS_TOKEN is set: then every client needs it as a " +
            "bearer token. Other clients get 404.",
          security: [{}, { metricsToken: [] }],
          responses: {
            "200": {
              description: "Prometheus text exposition format 0.0.4",
              content: { "text/plain": { schema: { type: "string" } } },
            },
            "401": { description: "METRICS_TOKEN is set and the bearer token is missing or wrong" },
            "404": { description: "Not a loopback client, and no METRICS_TOKEN is set" },
          },
        },
      },
      "/ui": {
        get: {
          operationId: "getDashboard",
          summary: "The web dashboard: sign in with a project and its key, then browse, add, search and delete",
          description: "Its files are served under /ui/ with a strict Content-Security-Policy. The page calls " +
            "POST /manage with the key it was given, kept in the tab's sessionStorage only.",
          security: [],
          responses: { "200": { description: "The page", content: { "text/html": { schema: { type: "string" } } } } },
        },
      },
      "/ui/settings.json": {
        get: {
          operationId: "getDashboardSettings",
          summary: "What the dashboard's forms offer: the registry's models, the languages and the request limits",
          security: [],
          responses: {
            "200": {
              description: "The settings",
              content: jsonContent({
                type: "object",
                required: ["models", "languages", "defaultLanguage", "maxDocsPerRequest", "maxBodyBytes"],
                properties: {
                  models: { type: "array", items: { type: "string" } },
                  defaultModel: { type: "string" },
                  languages: { type: "array", items: { type: "string" } },
                  defaultLanguage: { type: "string" },
                  maxDocsPerRequest: { type: "integer" },
                  maxBodyBytes: { type: "integer" },
                },
              }),
            },
          },
        },
      },
    },
    webhooks: openApiWebhooks(),
    components: {
      schemas: componentSchemas(limits),
      headers: {
        RequestId: {
          description: "The request's x-request-id when usable, otherwise one the server made; also in the log line",
          schema: { type: "string" },
        },
        ServerTiming: {
          description: 'The server\'s own time on the request until its response, e.g. "app;dur=1.84" (milliseconds)',
          schema: { type: "string" },
        },
      },
      securitySchemes: {
        metricsToken: { type: "http", scheme: "bearer", description: "METRICS_TOKEN, for GET /metrics" },
        projectKey: {
          type: "apiKey",
          in: "header",
          name: "x-project-key",
          description: "The key of the project named by the body's projectId, or one of its scoped keys",
        },
        tenantToken: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "A tenant token: a JWT (EdDSA or ES256) that the application signs with the private half of " +
            "a key registered with createKey's publicKey; its kid names that key",
        },
      },
    },
  };
}
