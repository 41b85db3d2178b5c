/** `search`: full-text, vector or hybrid retrieval over one index, filtered by metadata. */
import type { ServiceContext } from "../context.ts";
import { DEFAULT_HIT_FIELDS, type RequestOf } from "../api/request_schemas.ts";
import type { SearchHit, SearchResult } from "../api/response_schemas.ts";
import { ApiError } from "../api/api_error.ts";
import { readSettledIndex } from "../storage/index_records.ts";
import type { SearchMode } from "../search/search_mode.ts";
import type { SearchIndex } from "../search/search_index.ts";
import type { ScoredDoc } from "../search/search_query.ts";
import { indexNotFound } from "../api/index_errors.ts";
import { isExternalModel } from "../embedding/model_registry.ts";
import { passageByMatches } from "../passages/passage_by_matches.ts";
import { highlightRanges, snippetOf, type TextRange, textWords } from "../fulltext/highlights.ts";
import type { Word } from "../fulltext/analyzer.ts";
import type { MetadataFilter } from "../search/metadata_filter.ts";
import { indexModelId } from "../writes/index_model.ts";
import { modelCall } from "../writes/index_embedding.ts";

/**
 * Searches the latest acknowledged state of an index, within a tenant token's `tenantFilter` when there is one (both it
 * and the request's filter must match); 404 if unknown.
 */
export async function search(
  ctx: ServiceContext,
  request: RequestOf<"search">,
  tenantFilter?: MetadataFilter,
): Promise<SearchResult> {
  const started = performance.now();
  const entry = await readSettledIndex(ctx.kv, request.projectId, request.indexName);
  if (entry.value === null) throw indexNotFound(request.indexName);
  const record = entry.value;
  const mode = request.mode ?? "hybrid";
  const query = request.query ?? "";
  // 409 at once when the server no longer runs the index's model version, even for an empty index.
  const modelId = mode === "fulltext" ? undefined : indexModelId(ctx, record);
  const queryVectorOf = modelId === undefined
    ? undefined
    : () => vectorOf(ctx, { indexName: record.name, modelId, mode, query, vector: request.vector });
  // The query is embedded while the index loads (a cold load and a first model load overlap).
  const queryVector = record.docCount === 0 ? undefined : queryVectorOf?.();
  queryVector?.catch(() => {}); // Awaited below, unless the index turns out empty.
  const index = await ctx.indexStates.get(record);
  if (index.size === 0) return { hits: [], total: 0, tookMs: elapsedMs(started) };
  const vector = await (queryVector ?? queryVectorOf?.());
  const match = { typoTolerance: request.typoTolerance ?? true, prefix: request.prefix ?? true };
  const page = index.search({
    mode,
    text: query,
    match,
    vector,
    filter: bothFilters(tenantFilter, request.filter),
    sort: request.sort,
    facets: request.facets === undefined ? undefined : { fields: request.facets, limit: request.facetLimit ?? 100 },
    offset: request.offset ?? 0,
    limit: request.limit ?? 10,
  });
  const include = new Set<string>(request.include ?? DEFAULT_HIT_FIELDS);
  // Highlights in vector mode are the query's words found in the text.
  const terms = page.terms ??
    (include.has("highlights") || include.has("snippet") ? index.textQuery(query, match).terms : new Set<string>());
  const result: SearchResult = {
    hits: page.hits.map((scored) => toHit(index, scored, { include, terms })),
    total: page.total,
    tookMs: elapsedMs(started),
  };
  if (page.facets !== undefined) result.facets = page.facets;
  return result;
}

/** What a vector or hybrid search asks of its index's model. */
interface VectorQuery {
  indexName: string;
  modelId: string;
  mode: SearchMode;
  query: string;
  vector: number[] | undefined;
}

/**
 * The query vector: the request's own, checked against the model's dimensions, or the query embedded; 400 for an
 * external model without one, and for a query longer than the model reads (it is never cut silently).
 */
async function vectorOf(ctx: ServiceContext, request: VectorQuery): Promise<Float32Array> {
  const { indexName, modelId, mode, query } = request;
  const spec = ctx.embedder.spec(modelId)!;
  if (request.vector !== undefined) {
    const dimensions = await modelCall(modelId, () => ctx.embedder.dimensions(modelId));
    if (request.vector.length !== dimensions) {
      throw new ApiError(
        400,
        `Invalid "vector": it has ${request.vector.length} numbers; index "${indexName}" (model "${modelId}") ` +
          `takes ${dimensions}`,
      );
    }
    return Float32Array.from(request.vector);
  }
  if (isExternalModel(spec)) {
    throw new ApiError(
      400,
      `Missing required field "vector": index "${indexName}" uses external model "${modelId}", so a "${mode}" ` +
        `search needs the query's vector of ${spec.dimensions} numbers`,
    );
  }
  return await modelCall(modelId, async () => {
    const tokens = await ctx.embedder.tokens(modelId);
    const length = tokens.count([query])[0]! + tokens.specialTokens;
    if (length > tokens.window) {
      throw new ApiError(
        400,
        `Invalid "query": it is ${length} tokens long; model "${modelId}" reads at most ${tokens.window}`,
      );
    }
    return (await ctx.embedder.embed(modelId, [query]))[0]!;
  });
}

/** A filter that both must match, or the one there is. */
function bothFilters(first?: MetadataFilter, second?: MetadataFilter): MetadataFilter | undefined {
  if (first === undefined || second === undefined) return first ?? second;
  return (metadata) => first(metadata) && second(metadata);
}

function elapsedMs(since: number): number {
  return Math.round((performance.now() - since) * 1000) / 1000;
}

interface HitOptions {
  include: Set<string>;
  /** The terms the query's words matched, for highlights and the passage of a full-text match. */
  terms: ReadonlySet<string>;
}

function toHit(index: SearchIndex, { id, score, passage }: ScoredDoc, { include, terms }: HitOptions): SearchHit {
  const hit: SearchHit = { id };
  const content = index.content(id)!;
  // The text is read into words once, for whichever of passage, highlights and snippet need them.
  let words: Word[] | undefined;
  const wordsOf = () => words ??= textWords(content.text, index.analyzer);
  let highlights: TextRange[] | undefined;
  const highlightsOf = () => highlights ??= highlightRanges(wordsOf(), terms);
  if (include.has("score")) hit.score = score;
  if (include.has("text")) hit.text = content.text;
  if (include.has("metadata") && content.metadata !== undefined) hit.metadata = content.metadata;
  if (include.has("passage")) {
    const spans = index.passageSpans(id);
    const { start, end } = spans[passage ?? (spans.length < 2 ? 0 : passageByMatches(spans, highlightsOf()))]!;
    hit.passage = { text: content.text.slice(start, end), start, end };
  }
  if (include.has("highlights")) hit.highlights = highlightsOf();
  if (include.has("snippet")) hit.snippet = snippetOf(content.text, wordsOf(), terms);
  return hit;
}
