/** The search modes, in a module of their own that imports nothing, so that the API's types can name them. */

/** How a search ranks: by BM25 and cosine fused, by cosine similarity only, or by BM25 only. */
export const SEARCH_MODES = ["hybrid", "vector", "fulltext"] as const;

/** One search mode. */
export type SearchMode = typeof SEARCH_MODES[number];
