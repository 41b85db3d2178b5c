/**
 * The options and page types of the typed client (`client.ts`), apart so that the client stays one short file. Types
 * only: the client imports nothing from here at run time.
 */
import type {
  AddDocsResult,
  CreateKeyRequest,
  DocView,
  FederationOptions,
  IndexView,
  NotifyOptions,
  PassageOptions,
  RequestInputOf,
  SearchResult,
} from "../api/api_types.ts";

/** An index as `getIndex` and `listIndexes` show it. */
export type Index = IndexView;

/** A stored document as `getDocs` returns it; `metadata` is absent when the document has none. */
export type StoredDocument = DocView;

/** The answer of `addDocs`; `skipped` is present only with `upsert: false`. */
export type { AddDocsResult, SearchResult };

/**
 * Options of `search`: `mode`, `limit`, `offset`, `filter`, `include` (`"passage"` adds each hit's best passage,
 * `"highlights"` its matched words, `"snippet"` an excerpt around them), `typoTolerance` and `prefix` (both on by
 * default), `facets` and `facetLimit` (value counts over every match), `sort` (metadata fields before the score), and
 * `vector`, the query's own vector (required on an external model, where `query` may then be `""` in `vector` mode), and
 * `similarTo`, a document id to rank by instead of a query (pass `""` as the query). `rerank` (`{ modelId, topN }`)
 * reorders the first hits by a cross-encoder, each with a `rerankScore`.
 */
export type SearchOptions = Omit<RequestInputOf<"search">, "action" | "projectId" | "indexName" | "query">;

/** One search of `multiSearch`: its `indexName` (or an alias) and any field of `search`, `query` included. */
export type MultiSearchQuery = Omit<RequestInputOf<"search">, "action" | "projectId">;

/** Options of `multiSearch`: `federation` merges every query's hits into one page, scored comparably. */
export interface MultiSearchOptions {
  /** One page (`limit`, `offset`) of every query's hits, each naming its `indexName`. */
  federation?: FederationOptions;
}

/**
 * Options of every write: `idempotencyKey` is sent as `Idempotency-Key`, so that a retry of a write whose answer was
 * lost gets that answer again instead of writing twice.
 */
export interface WriteOptions {
  /** 1-255 printable ASCII characters, new for each write and the same for its retries. */
  idempotencyKey?: string;
}

/** Options of `createKey`: what the key may do, or a public JWK to register for tenant tokens. */
export type CreateKeyOptions = Omit<CreateKeyRequest, "action" | "projectId"> & WriteOptions;

/** Options of `createIndex`; with `wait: false` the server queues the write and answers with the index at once. */
export interface CreateIndexOptions extends WriteOptions {
  /** The embedding model; `svc-minilm` when absent. */
  modelId?: string;
  /** `false` queues the build and answers with the index at once. */
  wait?: boolean;
  /** With `wait: false`: where the server POSTs a signed event when the job ends (see the README's "Webhooks"). */
  notify?: NotifyOptions;
  /** How long texts are split into passages, in the model's tokens. */
  passages?: PassageOptions;
  /** The language full-text search stems and drops stop words in; `english` when absent. */
  language?: string;
}

/** Options of `addDocs`; `upsert: false` leaves existing documents untouched. */
export interface AddDocsOptions extends WriteOptions {
  /** `false` leaves existing documents untouched. */
  upsert?: boolean;
  /** `false` queues the write and answers with the index at once. */
  wait?: boolean;
  /** With `wait: false`: where the server POSTs a signed event when the job ends (see the README's "Webhooks"). */
  notify?: NotifyOptions;
}

/** A page of `limit` items after `cursor`; paging applies only when `limit` is given. */
export interface PageOptions {
  /** At most this many items. */
  limit?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
}

/** Options of `getDocs`: the documents of `docIds` that exist, in the order asked, or a page of all of them. */
export type GetDocsOptions = { docIds: string[] } | (PageOptions & { docIds?: never });

/** One page of a listing; `nextCursor`, absent on the last page, is the `cursor` of the next one. */
export interface Page<T> {
  /** The items of this page. */
  items: T[];
  /** The `cursor` of the next page; absent on the last one. */
  nextCursor?: string;
}

/** How far `addDocsInBatches` has come: documents sent and acknowledged so far, of `total`. */
export interface BatchProgress {
  /** Documents acknowledged so far. */
  done: number;
  /** Documents to send in all. */
  total: number;
}

/** Options of `addDocsInBatches`. */
export interface AddDocsInBatchesOptions {
  /** Most documents per request (default 500); at most the server's `MAX_DOCS_PER_REQUEST`. */
  batchSize?: number;
  /** Largest request body in bytes (default 8 MiB); below the server's `MAX_BODY_BYTES` (32 MiB by default). */
  maxBodyBytes?: number;
  /** `false` leaves existing documents untouched. */
  upsert?: boolean;
  /** Called after every acknowledged batch. */
  onProgress?: (progress: BatchProgress) => void;
}

/** Options of {@link QuireClient}: a key, or in a browser, a tenant token. */
export type QuireClientOptions =
  & {
    /** Where the service answers, e.g. `http://localhost:8000`; `/manage` is appended. */
    baseUrl: string | URL;
    /** The project whose indexes the client manages. */
    projectId: string;
    /** The `fetch` to use; the global one by default. */
    fetch?: typeof fetch;
  }
  & (
    /** The project's key or a scoped key, sent as `x-project-key`. */
    | { key: string; token?: never }
    /** A tenant token (a JWT the application signed), sent as `authorization: Bearer`. */
    | { token: string; key?: never }
  );
