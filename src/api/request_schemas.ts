/** The zod schemas of every action's request body, built for the configured limits. */
import { z } from "zod";
import { filterSchema } from "./filter_schema.ts";
import { SEARCH_MODES } from "../search/search_mode.ts";
import { MAX_DIMENSIONS } from "../embedding/model_registry.ts";
import { LANGUAGES } from "../fulltext/languages.ts";
import { PROJECT_ID_PATTERN } from "./project_id.ts";
import { notifySchema } from "./webhook_schemas.ts";
import { updateSettingsSchema } from "./settings_schemas.ts";
import { multiSearchSchema } from "./multi_search_schema.ts";
import { recordClickSchema, searchAnalyticsSchema } from "./analytics_schemas.ts";
import { createKeySchema } from "./key_schemas.ts";
import { decodeVector } from "../util/vector_base64.ts";

export { describeIssue } from "./describe_issue.ts";

/** Limits that request validation enforces. */
export interface Limits {
  maxDocsPerRequest: number;
  maxDocIdBytes: number;
  maxDocTextBytes: number;
  maxMetadataBytes: number;
}

/** Every action of `POST /manage`. */
export const ACTIONS = [
  "createIndex",
  "getIndex",
  "listIndexes",
  "deleteIndex",
  "addDocs",
  "deleteDocs",
  "getDocs",
  "search",
  "multiSearch",
  "reembedIndex",
  "exportIndex",
  "importIndex",
  "createKey",
  "listKeys",
  "deleteKey",
  "getWebhookSecret",
  "rotateWebhookSecret",
  "setAlias",
  "deleteAlias",
  "listAliases",
  "restoreIndex",
  "listDeletedIndexes",
  "updateSettings",
  "searchAnalytics",
  "recordClick",
] as const;

/** One action name. */
export type Action = typeof ACTIONS[number];

/** What a search hit may show besides its id. */
export const HIT_FIELDS = ["text", "metadata", "score", "passage", "highlights", "snippet"] as const;

/** What a search hit shows when the request has no `include`. */
export const DEFAULT_HIT_FIELDS = ["text", "metadata", "score"] as const;

/** Whether a string names an action. */
export function isAction(value: string): value is Action {
  return (ACTIONS as readonly string[]).includes(value);
}

const encoder = new TextEncoder();

function byteLength(text: string): number {
  return encoder.encode(text).byteLength;
}

/**
 * A string that is well-formed Unicode. A lone surrogate (`"\ud800"` in JSON) has no UTF-8 form: KV keys and the
 * storage codecs would turn it into U+FFFD, so that two different ids could collide.
 */
function unicodeString() {
  return z.string().refine((value) => value.isWellFormed(), { message: "must not contain lone surrogates" });
}

/** An index name: 1 to 256 characters, none of them a control character. */
// deno-lint-ignore no-control-regex
const indexNameSchema = unicodeString().min(1).max(256).regex(/^[^\u0000-\u001f\u007f]+$/, {
  message: "must not contain control characters",
});

// A custom check rather than z.record, which would copy the object; `meta` gives it a JSON Schema (see docSchema).
const metadataSchema = z.custom<Record<string, unknown>>(
  (value) => typeof value === "object" && value !== null && !Array.isArray(value),
  { message: "expected a JSON object" },
);

/** A vector as a client sends it: finite numbers (JSON has no others), as many as the index's model has dimensions. */
const vectorSchema = z.array(z.number()).min(1).max(MAX_DIMENSIONS);

/** A vector as base64 of its little-endian float32 values: a third of the bytes of JSON numbers, and read faster. */
const vectorBase64Schema = z.string().max(4 * Math.ceil(4 * MAX_DIMENSIONS / 3));

function docSchema(limits: Limits) {
  return z.object({
    id: unicodeString().min(1, { message: "must not be empty" })
      .describe(`Unique within the index; at most ${limits.maxDocIdBytes} UTF-8 bytes`),
    text: unicodeString().describe(
      `Required; at most ${limits.maxDocTextBytes} UTF-8 bytes; may be empty ("") for a document with its own vector`,
    ),
    vector: vectorSchema.optional().describe(
      "The document's own vector, of its index's model's dimensions: required on an external model, and the text " +
        "is then not embedded",
    ),
    vectorBase64: vectorBase64Schema.optional().describe(
      'The same vector as base64 of its little-endian float32 values, instead of "vector" (faster to send and read)',
    ),
    metadata: metadataSchema.meta({
      type: "object",
      additionalProperties: {},
      description: `Any JSON object, at most ${limits.maxMetadataBytes} bytes as JSON; stored and returned as given`,
    }).optional(),
  }).superRefine((doc, ctx) => {
    const tooBig = (path: string, what: string, bytes: number, limit: number) =>
      ctx.addIssue({
        code: "custom",
        path: [path],
        message: `document "${doc.id.slice(0, 64)}" has ${what} of ${bytes} bytes, more than the limit of ${limit}`,
      });
    const idBytes = byteLength(doc.id);
    if (idBytes > limits.maxDocIdBytes) tooBig("id", "an id", idBytes, limits.maxDocIdBytes);
    const textBytes = byteLength(doc.text);
    if (textBytes > limits.maxDocTextBytes) tooBig("text", "a text", textBytes, limits.maxDocTextBytes);
    if (doc.metadata !== undefined) {
      const metadataBytes = byteLength(JSON.stringify(doc.metadata));
      if (metadataBytes > limits.maxMetadataBytes) {
        tooBig("metadata", "metadata", metadataBytes, limits.maxMetadataBytes);
      }
    }
  }).transform(withDecodedVector);
}

/** A document whose vector may be the float32 values that `vectorBase64` carried. */
type WithFloat32Vector<T> = Omit<T, "vectorBase64" | "vector"> & { vector?: number[] | Float32Array | undefined };

/**
 * A document with its `vectorBase64` decoded into `vector`, kept as the float32 values it arrived as (turning 384 of
 * them into numbers cost a tenth of a bulk load's time); an issue for both, or for base64 that is no vector.
 */
function withDecodedVector<T extends { vector?: number[] | undefined; vectorBase64?: string | undefined }>(
  doc: T,
  ctx: z.core.$RefinementCtx<T>,
): WithFloat32Vector<T> {
  const { vectorBase64, ...rest } = doc;
  if (vectorBase64 === undefined) return rest as WithFloat32Vector<T>;
  if (doc.vector !== undefined) {
    ctx.addIssue({ code: "custom", path: ["vectorBase64"], message: 'cannot be combined with "vector"' });
    return z.NEVER;
  }
  const vector = decodeVector(vectorBase64);
  if (vector === undefined || vector.length > MAX_DIMENSIONS) {
    ctx.addIssue({
      code: "custom",
      path: ["vectorBase64"],
      message: `expected base64 of 1 to ${MAX_DIMENSIONS} little-endian float32 values, all finite`,
    });
    return z.NEVER;
  }
  return { ...rest, vector } as WithFloat32Vector<T>;
}

function docsSchema(limits: Limits) {
  return z.array(docSchema(limits)).max(limits.maxDocsPerRequest, {
    message: `must hold at most ${limits.maxDocsPerRequest} documents`,
  }).superRefine((docs, ctx) => {
    const seen = new Map<string, number>();
    docs.forEach((doc, i) => {
      const first = seen.get(doc.id);
      if (first === undefined) seen.set(doc.id, i);
      else {ctx.addIssue({
          code: "custom",
          path: [i, "id"],
          message: `duplicate id "${doc.id}", first at docs[${first}]`,
        });}
    });
  });
}

function docIdsSchema(limits: Limits) {
  const id = z.string().refine((value) => byteLength(value) <= limits.maxDocIdBytes, {
    message: `must be at most ${limits.maxDocIdBytes} bytes, like every document id`,
  }).describe(`A document id; at most ${limits.maxDocIdBytes} UTF-8 bytes`);
  return z.array(id).max(limits.maxDocsPerRequest, {
    message: `must hold at most ${limits.maxDocsPerRequest} ids`,
  });
}

/** Paging options: at most `limit` items after `cursor` (the value of the previous page's `x-next-cursor`). */
function pageSchema(limits: Limits) {
  return z.object({
    limit: z.number().int().min(1).max(limits.maxDocsPerRequest).optional(),
    cursor: z.string().min(1).max(4 * limits.maxDocIdBytes).optional(),
  });
}

/** Checked by authentication before the schema (an id of no possible project is 404), and described here. */
const projectIdSchema = z.string().regex(PROJECT_ID_PATTERN).describe(
  "The project: 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit",
);

/** A metadata field to facet or sort by: the key, or a dotted path into nested objects. */
const metadataFieldSchema = z.string().min(1).max(256);
const MAX_FACETS = 20;
const MAX_FACET_LIMIT = 1_000;
const MAX_SORT_FIELDS = 5;

/** How many of a search's first hits `rerank` rescores when its `topN` is absent. */
export const DEFAULT_RERANK_TOP_N = 50;

/** The most first hits that `rerank` rescores. */
export const MAX_RERANK_TOP_N = 200;

function searchSchema(limits: Limits) {
  return z.object({
    action: z.literal("search"),
    projectId: projectIdSchema,
    indexName: indexNameSchema,
    query: z.string().refine((query) => byteLength(query) <= limits.maxDocTextBytes, {
      message: `must be at most ${limits.maxDocTextBytes} bytes`,
    }).optional().describe(
      `At most ${limits.maxDocTextBytes} UTF-8 bytes; required and not blank unless mode is "vector"`,
    ),
    vector: vectorSchema.optional().describe(
      'The query\'s own vector: used by "vector" and "hybrid" modes instead of embedding the query; required there ' +
        "on an external model",
    ),
    similarTo: unicodeString().min(1).refine((id) => byteLength(id) <= limits.maxDocIdBytes, {
      message: `must be at most ${limits.maxDocIdBytes} bytes, like every document id`,
    }).optional().describe(
      "A document id: ranks by that document's vector (its most central passage's), without it; instead of \"query\"",
    ),
    mode: z.enum(SEARCH_MODES).optional(),
    limit: z.number().int().min(1).max(100).optional(),
    offset: z.number().int().min(0).optional(),
    filter: filterSchema.optional(),
    include: z.array(z.enum(HIT_FIELDS)).optional(),
    typoTolerance: z.boolean().optional().describe(
      "Query words of 5 or more characters match with one typo, of 9 or more with two (default true)",
    ),
    prefix: z.boolean().optional().describe("The last query word also matches words it starts (default true)"),
    facets: z.array(metadataFieldSchema).max(MAX_FACETS).optional().describe(
      "Metadata fields whose values to count over every matching document",
    ),
    facetLimit: z.number().int().min(1).max(MAX_FACET_LIMIT).optional().describe(
      "The most values per facet (default 100)",
    ),
    sort: z.array(z.object({ field: metadataFieldSchema, order: z.enum(["asc", "desc"]) })).max(MAX_SORT_FIELDS)
      .optional().describe(
        "Orders every match by these metadata fields (documents without one last), then by score, then by id",
      ),
    rerank: z.object({
      modelId: z.string().min(1).max(256).describe('A model of kind "reranker" (a cross-encoder), e.g. "svc-rerank"'),
      topN: z.number().int().min(1).max(MAX_RERANK_TOP_N).optional().describe(
        `How many of the first hits to rescore (default ${DEFAULT_RERANK_TOP_N})`,
      ),
    }).optional().describe(
      "Rescores the first topN hits with a cross-encoder on the query and each hit's best passage, in its order " +
        "(with rerankScore); offset and limit page the reranked hits, and hits past topN follow in their own order",
    ),
    analytics: z.boolean().optional().describe("false leaves the search out of searchAnalytics (default true)"),
  }).superRefine((request, ctx) => {
    const mode = request.mode ?? (request.similarTo === undefined ? "hybrid" : "vector");
    if (request.similarTo !== undefined) {
      const other = (["query", "vector"] as const).find((field) => request[field] !== undefined);
      const message = 'cannot be combined with "similarTo", which ranks by a stored document\'s vector';
      if (other !== undefined) ctx.addIssue({ code: "custom", path: [other], message });
      if (mode !== "vector") {
        ctx.addIssue({ code: "custom", path: ["mode"], message: 'must be "vector" with "similarTo"' });
      }
    }
    if (mode !== "vector" && request.query === undefined) {
      ctx.addIssue({
        code: "invalid_type",
        expected: "string",
        input: undefined,
        path: ["query"],
        message: "Invalid input: expected string, received undefined",
      });
    } else if (mode !== "vector" && request.query!.trim() === "") {
      ctx.addIssue({ code: "custom", path: ["query"], message: `must not be empty or blank in "${mode}" mode` });
    }
    if (request.rerank !== undefined && mode === "vector" && !request.query?.trim()) {
      ctx.addIssue({ code: "custom", path: ["rerank"], message: 'needs a text "query" to rerank by' });
    }
    if (request.rerank !== undefined && request.sort !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["rerank"],
        message: 'cannot be combined with "sort", which orders by metadata',
      });
    }
  });
}

/** Builds the schema of a request body, a union discriminated on `action`. */
export function requestSchema(limits: Limits) {
  const base = { projectId: projectIdSchema };
  const indexed = { ...base, indexName: indexNameSchema };
  return z.discriminatedUnion("action", [
    z.object({
      action: z.literal("createIndex"),
      ...indexed,
      docs: docsSchema(limits),
      modelId: z.string().optional(),
      options: z.object({
        wait: z.boolean().optional(),
        notify: notifySchema.optional(),
        passages: z.object({
          maxTokens: z.number().int().min(1).optional(),
          overlapTokens: z.number().int().min(0).optional(),
        }).optional().describe("How long texts split into passages, in the model's tokens"),
        language: z.enum(LANGUAGES as [string, ...string[]]).optional().describe(
          'The language full-text search stems and drops stop words in (default "english")',
        ),
      }).optional(),
    }),
    z.object({ action: z.literal("getIndex"), ...indexed }),
    z.object({ action: z.literal("listIndexes"), ...base, options: pageSchema(limits).optional() }),
    z.object({ action: z.literal("deleteIndex"), ...indexed }),
    z.object({
      action: z.literal("addDocs"),
      ...indexed,
      docs: docsSchema(limits),
      options: z.object({
        upsert: z.boolean().optional(),
        wait: z.boolean().optional(),
        notify: notifySchema.optional(),
      })
        .optional(),
    }),
    z.object({
      action: z.literal("deleteDocs"),
      ...indexed,
      docIds: docIdsSchema(limits).min(1, { message: "must be a non-empty array of document ids" }),
    }),
    z.object({
      action: z.literal("getDocs"),
      ...indexed,
      options: pageSchema(limits).extend({ docIds: docIdsSchema(limits).optional() }).optional(),
    }),
    searchSchema(limits),
    multiSearchSchema(base),
    z.object({
      action: z.literal("reembedIndex"),
      ...indexed,
      modelId: z.string().optional().describe("The model to move to; the index's own model when absent"),
      options: z.object({ notify: notifySchema.optional() }).optional(),
    }),
    z.object({ action: z.literal("exportIndex"), ...indexed }),
    z.object({ action: z.literal("importIndex"), ...indexed }).describe(
      "Sent as application/x-ndjson: this object on the first line, then an exportIndex stream",
    ),
    createKeySchema({ projectId: projectIdSchema, indexName: indexNameSchema }, ACTIONS),
    z.object({ action: z.literal("listKeys"), ...base }),
    z.object({ action: z.literal("deleteKey"), ...base, keyId: z.string().min(1).max(128) }),
    z.object({ action: z.literal("getWebhookSecret"), ...base }),
    z.object({ action: z.literal("rotateWebhookSecret"), ...base }),
    z.object({
      action: z.literal("setAlias"),
      ...base,
      alias: indexNameSchema.describe("The other name; it may not be the name of an index"),
      indexName: indexNameSchema.describe("The index the alias points at from now on"),
    }),
    z.object({ action: z.literal("deleteAlias"), ...base, alias: indexNameSchema }),
    z.object({ action: z.literal("listAliases"), ...base }),
    z.object({
      action: z.literal("restoreIndex"),
      ...indexed,
      indexId: z.string().min(1).max(64).optional().describe(
        "Which deletion of the name to restore, by the id listDeletedIndexes shows; the latest when absent",
      ),
    }),
    z.object({ action: z.literal("listDeletedIndexes"), ...base }),
    updateSettingsSchema(indexed, limits.maxDocIdBytes),
    searchAnalyticsSchema(indexed),
    recordClickSchema(indexed, limits.maxDocIdBytes),
  ]);
}

/** A validated request body. */
export type ManageRequest = z.output<ReturnType<typeof requestSchema>>;

/** A request body as a client sends it, before validation. */
export type ManageRequestInput = z.input<ReturnType<typeof requestSchema>>;

/** The request body of one action as a client sends it. */
export type RequestInputOf<A extends Action> = Extract<ManageRequestInput, { action: A }>;

/** The validated request of one action. */
export type RequestOf<A extends Action> = Extract<ManageRequest, { action: A }>;

/** A document of `createIndex` or `addDocs`, validated. */
export type DocInput = RequestOf<"createIndex">["docs"][number];
