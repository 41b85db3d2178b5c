/**
 * A typed client of quire's `POST /manage` for Deno, Node and browsers: it needs only `fetch`. Its types are the
 * API's own (`src/api/api_types.ts`, checked against the service's zod schemas) and its options (`src/client/`), imported as types only, so at run
 * time it imports nothing.
 *
 * @example Indexing and searching
 * ```ts
 * import { QuireClient } from "@quire/server/client";
 *
 * const quire = new QuireClient({ baseUrl: "http://localhost:8000", projectId: "default", key: "qk_…" });
 * await quire.createIndex("faq", [{ id: "1", text: "Reset your password in Settings" }]);
 * const { hits } = await quire.search("faq", "forgot my password", { limit: 5 });
 * ```
 *
 * @module
 */
import type {
  Action,
  AddDocsResult,
  CreatedKey,
  DocumentInput,
  FederatedSearchResult,
  FederationOptions,
  IndexSettingsInput,
  ListedKey,
  ManageRequestInput,
  MultiSearchResult,
  MultiSearchResults,
  NotifyOptions,
  RequestInputOf,
  ResponseOf,
  SearchAnalytics,
  SearchAnalyticsRequest,
  SearchResult,
  WebhookSecret,
} from "./src/api/api_types.ts";
import type {
  AddDocsInBatchesOptions,
  AddDocsOptions,
  CreateIndexOptions,
  CreateKeyOptions,
  GetDocsOptions,
  Index,
  MultiSearchOptions,
  MultiSearchQuery,
  Page,
  PageOptions,
  QuireClientOptions,
  SearchOptions,
  StoredDocument,
  WriteOptions,
} from "./src/client/client_options.ts";

export type * from "./src/api/api_types.ts";
export type * from "./src/client/client_options.ts";

/** The default number of documents per `addDocsInBatches` request. */
export const DEFAULT_BATCH_SIZE = 500;

/** The default largest body of an `addDocsInBatches` request: a quarter of the server's default limit. */
export const DEFAULT_BATCH_BYTES = 8 * 1024 * 1024;

const NEXT_CURSOR_HEADER = "x-next-cursor";
const encoder = new TextEncoder();

/** A request the service refused or failed: its HTTP `status`, its error message and the `action` it named. */
export class QuireError extends Error {
  /** The HTTP status, 400 to 599. */
  readonly status: number;
  /** The action of the failed request. */
  readonly action: string | undefined;

  /** An error of the service: its HTTP status, its message, and the action it refused. */
  constructor(status: number, message: string, action?: string) {
    super(message);
    this.name = "QuireError";
    this.status = status;
    this.action = action;
  }
}

/**
 * A client of one project. Every method sends one request, except `addDocsInBatches`. A refusal or failure of the
 * service rejects with a {@link QuireError}; a failed connection rejects with the error of `fetch`.
 */
export class QuireClient {
  readonly #url: URL;
  readonly #projectId: string;
  readonly #credential: Record<string, string>;
  readonly #fetch: typeof fetch;

  /** A client of one project at one base URL. */
  constructor(options: QuireClientOptions) {
    const base = String(options.baseUrl);
    this.#url = new URL("manage", base.endsWith("/") ? base : `${base}/`);
    this.#projectId = options.projectId;
    this.#credential = options.key !== undefined
      ? { "x-project-key": options.key }
      : { authorization: `Bearer ${options.token}` };
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** Creates an index with its first documents; resolves `true`, or with `wait: false` the `Building` index. */
  createIndex(name: string, docs?: DocumentInput[], options?: CreateIndexOptions & { wait?: true }): Promise<true>;
  /** Queues the build (`wait: false`) and resolves to the index at once. */
  createIndex(name: string, docs: DocumentInput[], options: CreateIndexOptions & { wait: false }): Promise<Index>;
  /** Creates an index of `docs`; resolves to `true`, or to the index when the build is queued. */
  createIndex(name: string, docs?: DocumentInput[], options?: CreateIndexOptions): Promise<true | Index>;
  async createIndex(name: string, docs: DocumentInput[] = [], options: CreateIndexOptions = {}): Promise<true | Index> {
    const response = await this.#send({
      action: "createIndex",
      projectId: this.#projectId,
      indexName: name,
      docs: docs.map(withVectorBase64),
      modelId: options.modelId,
      options: { wait: options.wait, notify: options.notify, passages: options.passages, language: options.language },
    }, options);
    return await response.json() as ResponseOf<"createIndex"> | Index;
  }

  /** Returns one index. */
  async getIndex(name: string): Promise<Index> {
    return await this.#call({ action: "getIndex", projectId: this.#projectId, indexName: name });
  }

  /** Lists the project's indexes by name: all of them, or a page of `limit` after `cursor`. */
  async listIndexes(options: PageOptions = {}): Promise<Page<Index>> {
    const response = await this.#send({ action: "listIndexes", projectId: this.#projectId, options });
    return await pageOf<ResponseOf<"listIndexes">[number]>(response);
  }

  /** Deletes an index and its documents. */
  async deleteIndex(name: string, options: WriteOptions = {}): Promise<true> {
    return await this.#call({ action: "deleteIndex", projectId: this.#projectId, indexName: name }, options);
  }

  /** Adds or replaces documents; resolves the counts, or with `wait: false` the `Updating` index. */
  addDocs(name: string, docs: DocumentInput[], options?: AddDocsOptions & { wait?: true }): Promise<AddDocsResult>;
  /** Queues the write (`wait: false`) and resolves to the index at once. */
  addDocs(name: string, docs: DocumentInput[], options: AddDocsOptions & { wait: false }): Promise<Index>;
  /** Adds or replaces `docs`; resolves to what changed, or to the index when the write is queued. */
  addDocs(name: string, docs: DocumentInput[], options?: AddDocsOptions): Promise<AddDocsResult | Index>;
  async addDocs(name: string, docs: DocumentInput[], options: AddDocsOptions = {}): Promise<AddDocsResult | Index> {
    const response = await this.#send({
      action: "addDocs",
      projectId: this.#projectId,
      indexName: name,
      docs: docs.map(withVectorBase64),
      options: { upsert: options.upsert, wait: options.wait, notify: options.notify },
    }, options);
    return await response.json() as ResponseOf<"addDocs"> | Index;
  }

  /**
   * Adds any number of documents, one request after another, each under `batchSize` documents and `maxBodyBytes`;
   * resolves the summed counts. A document too big for a body of its own is sent alone, for the server to refuse.
   * A failed batch rejects, and the batches before it stay added.
   */
  async addDocsInBatches(
    name: string,
    docs: DocumentInput[],
    options: AddDocsInBatchesOptions = {},
  ): Promise<AddDocsResult> {
    const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_BATCH_BYTES;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`Invalid batchSize ${batchSize}`);
    const envelope: RequestInputOf<"addDocs"> = {
      action: "addDocs",
      projectId: this.#projectId,
      indexName: name,
      docs: [],
      options: { upsert: options.upsert },
    };
    const total: AddDocsResult = { added: 0, updated: 0, ...options.upsert === false ? { skipped: 0 } : {} };
    let done = 0;
    // Sized as they are sent: a vector as base64 takes about a third of its JSON numbers' bytes.
    const wire = docs.map(withVectorBase64);
    for (const batch of batchesOf(wire, { batchSize, maxBytes: maxBodyBytes - jsonBytes(envelope) })) {
      const result = await this.addDocs(name, batch, { upsert: options.upsert });
      total.added += result.added;
      total.updated += result.updated;
      if (total.skipped !== undefined) total.skipped += result.skipped ?? 0;
      done += batch.length;
      options.onProgress?.({ done, total: docs.length });
    }
    return total;
  }

  /** Deletes documents by id, ignoring unknown ones; resolves how many were removed. */
  async deleteDocs(name: string, ids: string[], options: WriteOptions = {}): Promise<ResponseOf<"deleteDocs">> {
    return await this.#call({
      action: "deleteDocs",
      projectId: this.#projectId,
      indexName: name,
      docIds: ids,
    }, options);
  }

  /** Reads documents: those of `docIds` that exist, or all in id order, or a page of `limit` after `cursor`. */
  async getDocs(name: string, options: GetDocsOptions = {}): Promise<Page<StoredDocument>> {
    const response = await this.#send({ action: "getDocs", projectId: this.#projectId, indexName: name, options });
    return await pageOf<ResponseOf<"getDocs">[number]>(response);
  }

  /**
   * Searches an index: hybrid by default, or `vector` or `fulltext`, with an optional metadata filter; with
   * `options.similarTo` (and `""` as the query), the documents most like that one.
   */
  async search(name: string, query: string, options: SearchOptions = {}): Promise<SearchResult> {
    return await this.#call({
      ...options,
      action: "search",
      projectId: this.#projectId,
      indexName: name,
      query: options.similarTo !== undefined && query === "" ? undefined : query,
    });
  }

  /** Runs up to 20 searches in one request; resolves each one's answer, or its `{ error, status }`, in order. */
  multiSearch(queries: MultiSearchQuery[], options?: { federation?: undefined }): Promise<MultiSearchResults>;
  /** With `federation`, resolves one page of every query's hits, merged, each naming its `indexName`. */
  multiSearch(queries: MultiSearchQuery[], options: { federation: FederationOptions }): Promise<FederatedSearchResult>;
  /** Runs several searches in one request; answered in order, or merged with `federation`. */
  multiSearch(queries: MultiSearchQuery[], options?: MultiSearchOptions): Promise<MultiSearchResult>;
  async multiSearch(queries: MultiSearchQuery[], options: MultiSearchOptions = {}): Promise<MultiSearchResult> {
    return await this.#call({
      action: "multiSearch",
      projectId: this.#projectId,
      queries,
      federation: options.federation,
    });
  }

  /**
   * Embeds every document again, with the index's model at the version the server runs, or with `options.modelId`;
   * resolves to the index, `Updating` while the job runs. The way out of a 409 after a model version change. With
   * `notify`, the server POSTs a signed event when the job ends.
   */
  async reembedIndex(
    name: string,
    options: { modelId?: string; notify?: NotifyOptions } & WriteOptions = {},
  ): Promise<Index> {
    const response = await this.#send({
      action: "reembedIndex",
      projectId: this.#projectId,
      indexName: name,
      modelId: options.modelId,
      options: { notify: options.notify },
    }, options);
    return await response.json() as Index;
  }

  /**
   * Streams an index as JSON Lines: its settings, then one line per document with its passages' vectors. Write it to
   * a file for a backup; {@link importIndex} reads it back.
   */
  async exportIndex(name: string): Promise<ReadableStream<Uint8Array>> {
    const response = await this.#send({ action: "exportIndex", projectId: this.#projectId, indexName: name });
    return response.body!;
  }

  /**
   * Creates index `name` from an {@link exportIndex} stream, without embedding when the server runs the export's
   * model version; resolves to the new index.
   */
  async importIndex(
    name: string,
    exported: ReadableStream<Uint8Array> | string,
    options: WriteOptions = {},
  ): Promise<Index> {
    const request = { action: "importIndex", projectId: this.#projectId, indexName: name } as const;
    const head = new TextEncoder().encode(`${JSON.stringify(request)}\n`);
    const rest = typeof exported === "string" ? ReadableStream.from([new TextEncoder().encode(exported)]) : exported;
    const body = ReadableStream.from((async function* () {
      yield head;
      yield* rest;
    })());
    const response = await this.#send(request, { ...options, body, contentType: "application/x-ndjson" });
    return await response.json() as Index;
  }

  /**
   * Creates a scoped key (its secret `key` appears only in this answer), or with `publicKey`, registers the public
   * half of the key that signs tenant tokens. A key creates only keys within its own rights.
   */
  async createKey(options: CreateKeyOptions = {}): Promise<CreatedKey> {
    const { idempotencyKey, ...scope } = options;
    const response = await this.#send({ ...scope, action: "createKey", projectId: this.#projectId }, {
      idempotencyKey,
    });
    return await response.json() as ResponseOf<"createKey">;
  }

  /** Lists the project's keys within this client's rights, with their last use; never their secrets. */
  async listKeys(): Promise<ListedKey[]> {
    return await this.#call({ action: "listKeys", projectId: this.#projectId });
  }

  /** Deletes a key: every instance refuses it within `METADATA_CACHE_MS`. */
  async deleteKey(keyId: string, options: WriteOptions = {}): Promise<true> {
    return await this.#call({ action: "deleteKey", projectId: this.#projectId, keyId }, options);
  }

  /**
   * The project's webhook secret (`whsec_…`, made on first use), which signs every event of `notify`; needs a key
   * with admin rights (the project key, or a key granted `getWebhookSecret` by name).
   */
  async getWebhookSecret(): Promise<WebhookSecret> {
    return await this.#call({ action: "getWebhookSecret", projectId: this.#projectId });
  }

  /** Replaces the project's webhook secret; the new one signs every event from now on, retries included. */
  async rotateWebhookSecret(options: WriteOptions = {}): Promise<WebhookSecret> {
    return await this.#call({ action: "rotateWebhookSecret", projectId: this.#projectId }, options);
  }

  /** Points `alias` at the index `name` in one atomic step; every action then takes the alias where it takes a name. */
  async setAlias(alias: string, name: string): Promise<true> {
    return await this.#call({ action: "setAlias", projectId: this.#projectId, alias, indexName: name });
  }

  /** Deletes an alias; its index stays. */
  async deleteAlias(alias: string): Promise<true> {
    return await this.#call({ action: "deleteAlias", projectId: this.#projectId, alias });
  }

  /** Lists the project's aliases and the indexes they point at. */
  async listAliases(): Promise<ResponseOf<"listAliases">> {
    return await this.#call({ action: "listAliases", projectId: this.#projectId });
  }

  /** Changes an index's synonyms or pins (each one given replaces its value) without a rebuild; resolves the index. */
  async updateSettings(name: string, settings: IndexSettingsInput, options: WriteOptions = {}): Promise<Index> {
    const request = { action: "updateSettings", projectId: this.#projectId, indexName: name, settings } as const;
    return await this.#call(request, options);
  }

  /** An index's searches per UTC day, latency, top and no-result queries; `from`/`to` as `YYYY-MM-DD`. */
  async searchAnalytics(
    name: string,
    range: Omit<SearchAnalyticsRequest, "action" | "projectId" | "indexName"> = {},
  ): Promise<SearchAnalytics> {
    const request = { ...range, action: "searchAnalytics", projectId: this.#projectId, indexName: name } as const;
    return await this.#call(request);
  }

  /** Counts a click on the hit `id` at 1-based `position` of a search of `query`, for its click-through. */
  async recordClick(name: string, click: { query: string; id: string; position: number }): Promise<true> {
    const request = { ...click, action: "recordClick", projectId: this.#projectId, indexName: name } as const;
    return await this.#call(request);
  }

  /** Brings back the latest deleted index of that name, as it was, within the server's `UNDO_WINDOW`. */
  async restoreIndex(name: string): Promise<Index> {
    return await this.#call({ action: "restoreIndex", projectId: this.#projectId, indexName: name });
  }

  /** Lists the deleted indexes that can still be restored, each with when it expires. */
  async listDeletedIndexes(): Promise<ResponseOf<"listDeletedIndexes">> {
    return await this.#call({ action: "listDeletedIndexes", projectId: this.#projectId });
  }

  /** Sends `request` and reads its answer's JSON body. */
  async #call<A extends Action>(
    request: ManageRequestInput & { action: A },
    options?: WriteOptions,
  ): Promise<ResponseOf<A>> {
    return await (await this.#send(request, options)).json() as ResponseOf<A>;
  }

  async #send(
    request: ManageRequestInput,
    options: WriteOptions & { body?: BodyInit; contentType?: string } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = {
      "content-type": options.contentType ?? "application/json",
      "x-service-version": "v1",
      ...this.#credential,
    };
    if (options.idempotencyKey !== undefined) headers["idempotency-key"] = options.idempotencyKey;
    const response = await this.#fetch(this.#url, {
      method: "POST",
      headers,
      body: options.body ?? JSON.stringify(request),
    });
    if (response.ok) return response;
    throw await errorOf(response, request.action);
  }
}

async function pageOf<T>(response: Response): Promise<Page<T>> {
  const items = await response.json() as T[];
  const nextCursor = response.headers.get(NEXT_CURSOR_HEADER);
  return nextCursor === null ? { items } : { items, nextCursor };
}

async function errorOf(response: Response, action: string): Promise<QuireError> {
  const text = await response.text();
  try {
    const body = JSON.parse(text);
    if (typeof body?.error === "string") {
      return new QuireError(response.status, body.error, typeof body.action === "string" ? body.action : action);
    }
  } catch {
    // Not the service's JSON (a proxy's error page, say): the status says what happened.
  }
  return new QuireError(response.status, `HTTP ${response.status} ${response.statusText}`.trim(), action);
}

/**
 * `doc` as it is sent: its `vector` as `vectorBase64`, the base64 of its little-endian float32 values, which the server
 * reads many times faster than JSON numbers and which stores the same float32 values.
 */
function withVectorBase64(doc: DocumentInput): DocumentInput {
  if (doc.vector === undefined || doc.vectorBase64 !== undefined) return doc;
  const { vector, ...rest } = doc;
  const view = new DataView(new ArrayBuffer(4 * vector.length));
  vector.forEach((value, i) => view.setFloat32(4 * i, value, true));
  return { ...rest, vectorBase64: base64Of(new Uint8Array(view.buffer)) };
}

/** Base64 of `bytes`: `Uint8Array.prototype.toBase64` where the runtime has it, `btoa` elsewhere. */
function base64Of(bytes: Uint8Array): string {
  const withBase64 = bytes as Uint8Array & { toBase64?: () => string };
  if (typeof withBase64.toBase64 === "function") return withBase64.toBase64();
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function jsonBytes(value: unknown): number {
  return encoder.encode(JSON.stringify(value)).byteLength;
}

/** Splits documents into runs of at most `batchSize` whose JSON takes at most `maxBytes`. */
function* batchesOf(
  docs: DocumentInput[],
  limits: { batchSize: number; maxBytes: number },
): Generator<DocumentInput[]> {
  let batch: DocumentInput[] = [];
  let bytes = 0;
  for (const doc of docs) {
    const docBytes = jsonBytes(doc) + 1; // and its comma
    if (batch.length > 0 && (batch.length === limits.batchSize || bytes + docBytes > limits.maxBytes)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(doc);
    bytes += docBytes;
  }
  if (batch.length > 0) yield batch;
}
