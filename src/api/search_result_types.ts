/**
 * The answer of `search` as plain TypeScript types: its hits, their passages, highlights and snippets, and facets.
 * `api_types.ts` exports them with the other bodies; `tests/unit/api_types_test.ts` checks them against the zod schemas.
 */

/** One search hit; fields outside the request's `include` are absent, and so is `metadata` when the doc has none. */
export interface SearchHit {
  /** The document id. */
  id: string;
  /** The ranking score: higher is better. */
  score?: number | undefined;
  /** The document's text. */
  text?: string | undefined;
  /** The document's metadata. */
  metadata?: Record<string, unknown> | undefined;
  /** With `include: ["passage"]`: the best passage, where `text.slice(start, end) === passage.text`. */
  passage?: PassageHit | undefined;
  /** With `include: ["highlights"]`: every word of `text` a query word matched (typos and prefixes included). */
  highlights?: TextRange[] | undefined;
  /** With `include: ["snippet"]`: about 20 words around the best matches, `…` where cut. */
  snippet?: { text: string; highlights: TextRange[] } | undefined;
  /** A hit that a pin of the index's settings put first; it carries no score. */
  pinned?: true | undefined;
  /** With `rerank`, on each of the first `topN` hits: the cross-encoder's relevance logit, which orders them. */
  rerankScore?: number | undefined;
}

/** A stretch of a text in UTF-16 code units: `text.slice(start, end)`. */
export interface TextRange {
  /** Where it starts. */
  start: number;
  /** Where it ends (exclusive). */
  end: number;
}

/** One value of a facet and how many matching documents hold it. */
export interface FacetValue {
  /** The metadata value. */
  value: string | number | boolean;
  /** Matching documents that hold it. */
  count: number;
}

/** The passage of a hit, with offsets into the document's text in UTF-16 code units (as JavaScript slices). */
export interface PassageHit {
  /** The passage's text. */
  text: string;
  /** Where it starts in the document's text. */
  start: number;
  /** Where it ends (exclusive). */
  end: number;
}

/** The answer of `search`. */
export interface SearchResult {
  /** The page of hits, best first. */
  hits: SearchHit[];
  /** How many documents matched, before limit and offset. */
  total: number;
  /** With `facets`: per field, its values over every match, the most common first, then in value order. */
  facets?: Record<string, FacetValue[]> | undefined;
  /** Time the search took on the server. */
  tookMs: number;
}
