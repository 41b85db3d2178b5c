/**
 * What a search asks of an index, and what it answers: the query (its mode, words, vector, filter, sort, facets and
 * page), and one page of ranked documents.
 */
import type { SearchMode } from "./search_mode.ts";
import type { MatchOptions, TextQuery } from "./text_query.ts";
import type { MetadataFilter } from "./metadata_filter.ts";
import type { SortField } from "./sort_order.ts";
import type { FacetCounts, FacetRequest } from "./facet_counts.ts";

/**
 * A query against a search index; `vector` is the query embedded with the index's model. Its words match exactly
 * unless `match` allows typos and prefixes.
 */
export interface SearchQuery {
  mode: SearchMode;
  text: string;
  match?: MatchOptions | undefined;
  /** The terms the text's words match, when the caller has them already (with synonyms added); else from `text`. */
  textQuery?: TextQuery | undefined;
  vector?: Float32Array | undefined;
  filter?: MetadataFilter | undefined;
  /** Orders every match by these metadata fields first, then by score. */
  sort?: SortField[] | undefined;
  /** Counts the values of these metadata fields over every match. */
  facets?: FacetRequest | undefined;
  offset: number;
  limit: number;
}

/** One ranked document, and its best passage by vector score (as an index into its passages) where one was scored. */
export interface ScoredDoc {
  id: string;
  score: number;
  passage?: number;
  /** Where the search found the document: valid while its index holds that id there (see `SearchIndex.content`). */
  slot?: number;
  /** Put first by a pin of the index's settings, not by its score. */
  pinned?: boolean;
}

/**
 * One page of ranked documents, the number of documents that matched, the terms the query's words matched (where the
 * mode matched any), and the facet counts asked for.
 */
export interface SearchPage {
  hits: ScoredDoc[];
  total: number;
  /** In hybrid mode, how many documents the query's words matched (`total` counts every document there). */
  textMatches?: number;
  terms?: ReadonlySet<string>;
  facets?: FacetCounts;
}
