/**
 * The API's bodies as plain TypeScript types, as a client sends and receives them. The zod schemas of
 * `request_schemas.ts` and `response_schemas.ts` validate and describe the same shapes; `tests/unit/api_types_test.ts`
 * fails when the two drift apart. The client and the published package use these, so that their types are explicit.
 */
import type { Action } from "./action_type.ts";
import type {
  AliasView,
  CreatedKey,
  CreateKeyRequest,
  DeleteAliasRequest,
  DeleteKeyRequest,
  ListAliasesRequest,
  ListDeletedIndexesRequest,
  ListedKey,
  ListKeysRequest,
  RestoreIndexRequest,
  SetAliasRequest,
} from "./key_api_types.ts";
import type { SearchResult } from "./search_result_types.ts";
import type { UpdateSettingsRequest } from "./settings_api_types.ts";
import type { AddDocsResult, DeletedIndexView, DeleteDocsResult, DocView, IndexView } from "./index_api_types.ts";
import type { MultiSearchRequestOf, MultiSearchResult } from "./multi_search_api_types.ts";
import type { RecordClickRequest, SearchAnalytics, SearchAnalyticsRequest } from "./analytics_api_types.ts";
import type {
  GetWebhookSecretRequest,
  NotifyOptions,
  RotateWebhookSecretRequest,
  WebhookSecret,
} from "./webhook_api_types.ts";

export type * from "./action_type.ts";
export type * from "./key_api_types.ts";
export type * from "./webhook_api_types.ts";
export type * from "./search_result_types.ts";
export type * from "./settings_api_types.ts";
export type * from "./analytics_api_types.ts";
export type * from "./index_api_types.ts";
export type * from "./multi_search_api_types.ts";

/** How `search` ranks: BM25 on the text, cosine similarity of embeddings, or both fused. */
export type SearchMode = "fulltext" | "vector" | "hybrid";

/** What a search hit may show besides its id. */
export type HitField = "text" | "metadata" | "score" | "passage" | "highlights" | "snippet";

/**
 * A document to index: a unique `id`, a `text` (required, may be empty), optional `metadata` (any JSON object), and
 * optionally its own `vector`.
 */
export interface DocumentInput {
  /** Unique within the index. */
  id: string;
  /** Required: the text that is embedded (passage by passage) and searched; `""` for a document with its own vector. */
  text: string;
  /** The document's own vector, of its model's dimensions: required on an external model; then nothing is embedded. */
  vector?: number[] | undefined;
  /** The same vector as base64 of its little-endian float32 values, instead of `vector`: faster to send and read. */
  vectorBase64?: string | undefined;
  /** Any JSON object, stored and returned as given, and filtered on by `search`. */
  metadata?: Record<string, unknown> | undefined;
}

/**
 * A Mongo-style predicate over metadata: a field's value or `{$eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $exists}`,
 * and `$and` / `$or` of filters.
 */
export type MetadataFilterInput = Record<string, unknown>;

/** Paging: at most `limit` items after `cursor` (the previous page's `x-next-cursor`). */
export interface PageInput {
  /** At most this many items. */
  limit?: number | undefined;
  /** The previous page's `x-next-cursor`. */
  cursor?: string | undefined;
}

/** What every request names. */
export interface ProjectRequest {
  /** The project, whose key goes in the `x-project-key` header. */
  projectId: string;
}

/** What every request about one index names. */
export interface IndexRequest extends ProjectRequest {
  /** The index, unique within the project. */
  indexName: string;
}

/** The body of `createIndex`. */
export interface CreateIndexRequest extends IndexRequest {
  /** The action. */
  action: "createIndex";
  /** The first documents. */
  docs: DocumentInput[];
  /** The embedding model; `svc-minilm` when absent. */
  modelId?: string | undefined;
  /**
   * `wait: false` queues the build and answers at once, and `notify` then has the end of the job POSTed to a URL;
   * `passages` sets how long texts are split; `language` (one of those `@orama/stemmers` ships, `english` when absent)
   * how full-text search stems and which stop words it drops.
   */
  options?: {
    wait?: boolean | undefined;
    notify?: NotifyOptions | undefined;
    passages?: PassageOptions | undefined;
    language?: string | undefined;
  } | undefined;
}

/** How an index splits long texts into passages, in its model's tokens. */
export interface PassageOptions {
  /** The most tokens per passage, special tokens included; 256 (or the model's window, if smaller) when absent. */
  maxTokens?: number | undefined;
  /**
   * Tokens at the end of a passage that the next one repeats, as whole sentences or else as words; 32 (at most a
   * quarter of maxTokens) when absent.
   */
  overlapTokens?: number | undefined;
}

/** The body of `getIndex`. */
export interface GetIndexRequest extends IndexRequest {
  /** The action. */
  action: "getIndex";
}

/** The body of `listIndexes`. */
export interface ListIndexesRequest extends ProjectRequest {
  /** The action. */
  action: "listIndexes";
  /** A page of indexes, by name. */
  options?: PageInput | undefined;
}

/** The body of `deleteIndex`. */
export interface DeleteIndexRequest extends IndexRequest {
  /** The action. */
  action: "deleteIndex";
}

/** The body of `addDocs`. */
export interface AddDocsRequest extends IndexRequest {
  /** The action. */
  action: "addDocs";
  /** Documents to add or replace, by id. */
  docs: DocumentInput[];
  /**
   * `upsert: false` leaves existing documents alone; `wait: false` queues the write, and `notify` then has the end of
   * the job POSTed to a URL.
   */
  options?: {
    upsert?: boolean | undefined;
    wait?: boolean | undefined;
    notify?: NotifyOptions | undefined;
  } | undefined;
}

/** The body of `deleteDocs`. */
export interface DeleteDocsRequest extends IndexRequest {
  /** The action. */
  action: "deleteDocs";
  /** Ids of the documents to remove; unknown ids are ignored. */
  docIds: string[];
}

/** The body of `getDocs`. */
export interface GetDocsRequest extends IndexRequest {
  /** The action. */
  action: "getDocs";
  /** The documents of `docIds`, or a page of all of them. */
  options?: (PageInput & { docIds?: string[] | undefined }) | undefined;
}

/** The body of `search`. */
export interface SearchRequest extends IndexRequest {
  /** The action. */
  action: "search";
  /** The query text; not blank unless `mode` is `vector`. */
  query?: string | undefined;
  /** The query's own vector, used instead of embedding the query; required on an external model but in `fulltext`. */
  vector?: number[] | undefined;
  /** A document id: ranks by that document's vector (its most central passage's), without it; instead of `query`. */
  similarTo?: string | undefined;
  /** `hybrid` when absent. */
  mode?: SearchMode | undefined;
  /** Hits per page, 1 to 100; 10 when absent. */
  limit?: number | undefined;
  /** Hits to skip. */
  offset?: number | undefined;
  /** Only documents whose metadata match. */
  filter?: MetadataFilterInput | undefined;
  /** The fields each hit shows besides its id. */
  include?: HitField[] | undefined;
  /** Query words of 5 or more characters match with one typo, of 9 or more with two; true when absent. */
  typoTolerance?: boolean | undefined;
  /** The last query word also matches the words it starts; true when absent. */
  prefix?: boolean | undefined;
  /** Metadata fields whose values to count over every matching document. */
  facets?: string[] | undefined;
  /** The most values per facet, 1 to 1000; 100 when absent. */
  facetLimit?: number | undefined;
  /** Orders every match by these metadata fields (documents without one last), then by score, then by id. */
  sort?: SortField[] | undefined;
  /** Rescores the first hits with a cross-encoder and returns them in its order, each with `rerankScore`. */
  rerank?: RerankOptions | undefined;
  /** `false` leaves the search out of `searchAnalytics`; true when absent. */
  analytics?: boolean | undefined;
}

/** The `rerank` of a search: which cross-encoder rescores how many of the first hits. */
export interface RerankOptions {
  /** A model of kind `reranker` in the server's registry, e.g. `svc-rerank`. */
  modelId: string;
  /** How many of the first hits to rescore, 1 to 200; 50 when absent. */
  topN?: number | undefined;
}

/** The body of `multiSearch`: 1 to 20 searches, each the fields of a `search` without `action` and `projectId`. */
export type MultiSearchRequest = MultiSearchRequestOf<Omit<SearchRequest, "action" | "projectId">>;

/** One sort key of a search. */
export interface SortField {
  /** The metadata key, or a dotted path into nested objects. */
  field: string;
  /** Ascending or descending. */
  order: "asc" | "desc";
}

/** The body of `reembedIndex`. */
export interface ReembedIndexRequest extends IndexRequest {
  /** The action. */
  action: "reembedIndex";
  /** The model to move to; the index's own model (at the version the server runs) when absent. */
  modelId?: string | undefined;
  /** `notify` has the end of the job POSTed to a URL. */
  options?: { notify?: NotifyOptions | undefined } | undefined;
}

/** The body of `exportIndex`. */
export interface ExportIndexRequest extends IndexRequest {
  /** The action. */
  action: "exportIndex";
}

/**
 * The first line of an `importIndex` body, sent as `application/x-ndjson`; an `exportIndex` stream follows it. The
 * index `indexName` is created.
 */
export interface ImportIndexRequest extends IndexRequest {
  /** The action. */
  action: "importIndex";
}

/** A request body of `POST /manage`, as a client sends it. */
export type ManageRequestInput =
  | CreateIndexRequest
  | GetIndexRequest
  | ListIndexesRequest
  | DeleteIndexRequest
  | AddDocsRequest
  | DeleteDocsRequest
  | GetDocsRequest
  | SearchRequest
  | MultiSearchRequest
  | ReembedIndexRequest
  | ExportIndexRequest
  | ImportIndexRequest
  | CreateKeyRequest
  | ListKeysRequest
  | DeleteKeyRequest
  | GetWebhookSecretRequest
  | RotateWebhookSecretRequest
  | SetAliasRequest
  | DeleteAliasRequest
  | ListAliasesRequest
  | RestoreIndexRequest
  | ListDeletedIndexesRequest
  | UpdateSettingsRequest
  | SearchAnalyticsRequest
  | RecordClickRequest;

/** The request body of one action. */
export type RequestInputOf<A extends Action> = Extract<ManageRequestInput, { action: A }>;

/** The success body of every action. */
export interface ResponseBodies {
  /** `true`, or the index while a queued build runs. */
  createIndex: true;
  /** The index. */
  getIndex: IndexView;
  /** One page of indexes. */
  listIndexes: IndexView[];
  /** `true`. */
  deleteIndex: true;
  /** What changed. */
  addDocs: AddDocsResult;
  /** What was removed. */
  deleteDocs: DeleteDocsResult;
  /** The documents. */
  getDocs: DocView[];
  /** The hits. */
  search: SearchResult;
  /** Each query's answer or error in order, or with `federation` one merged page. */
  multiSearch: MultiSearchResult;
  /** The index, `Updating` while the re-embedding job runs (answered with 202). */
  reembedIndex: IndexView;
  /** JSON Lines: the index's settings, then one line per document. */
  exportIndex: string;
  /** The new index. */
  importIndex: IndexView;
  /** The new key, with its secret shown only here. */
  createKey: CreatedKey;
  /** The project's keys within the caller's rights. */
  listKeys: ListedKey[];
  /** `true`. */
  deleteKey: true;
  /** The project's webhook secret, created on first use. */
  getWebhookSecret: WebhookSecret;
  /** The project's new webhook secret. */
  rotateWebhookSecret: WebhookSecret;
  /** `true`. */
  setAlias: true;
  /** `true`. */
  deleteAlias: true;
  /** The project's aliases within the caller's scope. */
  listAliases: AliasView[];
  /** The index, as it was when deleted. */
  restoreIndex: IndexView;
  /** The deleted indexes that can still be restored. */
  listDeletedIndexes: DeletedIndexView[];
  /** The index, with its new settings. */
  updateSettings: IndexView;
  /** The index's searches over the days asked for. */
  searchAnalytics: SearchAnalytics;
  /** `true`. */
  recordClick: true;
}

/** The `200` body of one action. */
export type ResponseOf<A extends Action> = ResponseBodies[A];
