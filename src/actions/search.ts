/** `search`: full-text, vector or hybrid retrieval over one index, filtered by metadata. */
import { TYPOS_BELOW_MATCHES } from "../search/text_query.ts";
import type { ServiceContext } from "../context.ts";
import { DEFAULT_HIT_FIELDS, type RequestOf } from "../api/request_schemas.ts";
import type { SearchHit, SearchResult } from "../api/response_schemas.ts";
import { ApiError } from "../api/api_error.ts";
import { type IndexRecord, readSettledIndex } from "../storage/index_records.ts";
import { analyticsIndexOf } from "../storage/analytics_records.ts";
import type { SearchMode } from "../search/search_mode.ts";
import type { SearchIndex } from "../search/search_index.ts";
import { indexNotFound } from "../api/index_errors.ts";
import { isExternalModel } from "../embedding/model_registry.ts";
import { passageByMatches } from "../passages/passage_by_matches.ts";
import { highlightRanges, snippetOf, type TextRange, textWords } from "../fulltext/highlights.ts";
import type { Word } from "../fulltext/analyzer.ts";
import type { MetadataFilter } from "../search/metadata_filter.ts";
import { indexModelId } from "../writes/index_model.ts";
import { modelCall } from "../writes/index_embedding.ts";
import { searchWithout, similarVector } from "./similar_to.ts";
import { checkedRerank, rankedBounds, type RerankedDoc, rerankedPage } from "../reranking/rerank_hits.ts";
import { searchWithSettings } from "../search/settings_search.ts";
import { passageSpansOf } from "../search/indexed_doc.ts";

/**
 * Searches the latest acknowledged state of an index, within a tenant token's `tenantFilter` when there is one (both it
 * and the request's filter must match), and counts the search for search analytics unless it says `analytics: false`;
 * 404 if unknown.
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
  const { result, matched } = await searchRecord(ctx, record, request, { tenantFilter, started });
  if (request.analytics !== false) {
    const index = { ...analyticsIndexOf(record), language: record.language };
    ctx.analytics?.recordSearch(index, request.query, matched, result.tookMs);
  }
  return result;
}

/**
 * A search's answer, and how many documents it found for search analytics: in hybrid mode those its words matched,
 * since its `total` counts every document (vector ranking excludes none), so that a query that finds nothing by its
 * words shows as one.
 */
interface Searched {
  result: SearchResult;
  matched: number;
}

/** How a search runs besides its request: within a tenant token's filter, and timed from `started`. */
interface SearchContext {
  tenantFilter: MetadataFilter | undefined;
  started: number;
}

/** Searches the index of `record`. */
async function searchRecord(
  ctx: ServiceContext,
  record: IndexRecord,
  request: RequestOf<"search">,
  { tenantFilter, started }: SearchContext,
): Promise<Searched> {
  const mode = request.mode ?? (request.similarTo === undefined ? "hybrid" : "vector");
  const query = request.query ?? "";
  const rerank = checkedRerank(ctx.embedder, request.rerank);
  // 409 at once when the server no longer runs the index's model version, even for an empty index.
  // similarTo compares stored vectors with each other, and needs no model.
  const modelId = mode === "fulltext" || request.similarTo !== undefined ? undefined : indexModelId(ctx, record);
  const similar = request.similarTo === undefined
    ? undefined
    : similarVector(ctx, record, { id: request.similarTo, tenantFilter });
  similar?.catch(() => {}); // Awaited below.
  const queryVectorOf = similar !== undefined
    ? () => similar
    : modelId === undefined
    ? undefined
    : () => vectorOf(ctx, { indexName: record.name, modelId, mode, query, vector: request.vector });
  // The query is embedded while the index loads (a cold load and a first model load overlap).
  const queryVector = record.docCount === 0 ? undefined : queryVectorOf?.();
  queryVector?.catch(() => {}); // Awaited below, unless the index turns out empty.
  const settings = ctx.settings.of(record);
  settings.catch(() => {}); // Awaited below, unless the index turns out empty.
  const index = await ctx.indexStates.get(record);
  await similar; // 404 for an unknown document, even in an empty index.
  if (index.size === 0) return { result: { hits: [], total: 0, tookMs: elapsedMs(started) }, matched: 0 };
  const vector = await (queryVector ?? queryVectorOf?.());
  // Typos of words the index holds as they are are looked up only when few documents match without them.
  const match = {
    typoTolerance: request.typoTolerance ?? true,
    prefix: request.prefix ?? true,
    enough: TYPOS_BELOW_MATCHES,
  };
  const pageBounds = { offset: request.offset ?? 0, limit: request.limit ?? 10 };
  // Synonyms and pins take a query; similarTo has none.
  const page = searchWithSettings(index, (await settings).forQuery(query), {
    mode,
    text: query,
    match,
    vector,
    filter: bothFilters(tenantFilter, request.filter),
    sort: request.sort,
    facets: request.facets === undefined ? undefined : { fields: request.facets, limit: request.facetLimit ?? 100 },
    ...rankedBounds(rerank, pageBounds),
  }, (expanded) => searchWithout(index, request.similarTo, expanded));
  const include = new Set<string>(request.include ?? DEFAULT_HIT_FIELDS);
  // Highlights in vector mode are the query's words found in the text.
  const terms = page.terms ??
    (rerank !== undefined || include.has("highlights") || include.has("snippet")
      ? index.textQuery(query, match).terms
      : new Set<string>());
  const hits = rerank === undefined
    ? page.hits
    : await rerankedPage(rerank, page.hits, { index, query, terms, page: pageBounds });
  const result: SearchResult = {
    hits: hits.map((scored) => toHit(index, scored, { include, terms })),
    total: page.total,
    tookMs: elapsedMs(started),
  };
  if (page.facets !== undefined) result.facets = page.facets;
  return { result, matched: page.textMatches ?? page.total };
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

function toHit(index: SearchIndex, scored: RerankedDoc, { include, terms }: HitOptions): SearchHit {
  const { id, score, passage } = scored;
  const hit: SearchHit = { id };
  const content = index.content(id, scored.slot)!;
  // The text is read into words once, for whichever of passage, highlights and snippet need them.
  let words: Word[] | undefined;
  const wordsOf = () => words ??= textWords(content.text, index.analyzer);
  let highlights: TextRange[] | undefined;
  const highlightsOf = () => highlights ??= highlightRanges(wordsOf(), terms);
  // A pinned hit's place comes from its pin, not from a score.
  if (scored.pinned) hit.pinned = true;
  else if (include.has("score")) hit.score = score;
  if (include.has("text")) hit.text = content.text;
  if (include.has("metadata") && content.metadata !== undefined) hit.metadata = content.metadata;
  if (include.has("passage")) {
    const spans = passageSpansOf(content);
    const { start, end } = spans[passage ?? (spans.length < 2 ? 0 : passageByMatches(spans, highlightsOf()))]!;
    hit.passage = { text: content.text.slice(start, end), start, end };
  }
  if (include.has("highlights")) hit.highlights = highlightsOf();
  if (include.has("snippet")) hit.snippet = snippetOf(content.text, wordsOf(), terms);
  if (scored.rerankScore !== undefined) hit.rerankScore = scored.rerankScore;
  return hit;
}
