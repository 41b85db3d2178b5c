/** A full-text query as the text index matches it, and the scores it answers with. */

/** How a query's words match: with typos, and the last one as a prefix. */
export interface MatchOptions {
  typoTolerance: boolean;
  prefix: boolean;
  /**
   * How many documents a search wants (its offset and limit): typos of words that documents hold as they are are looked
   * up only when fewer match without them. Without it, every word of typo length is looked up with typos.
   */
  enough?: number | undefined;
}

/**
 * Query words that documents hold as typed get typo matches too when fewer documents than this match the query: the
 * `enough` that searches ask for, the same for every page so that paging sees one result set.
 */
export const TYPOS_BELOW_MATCHES = 10;

/** A term a query word matches and the weight of that match. */
export interface TermMatch {
  term: string;
  weight: number;
}

/** A query as the index matches it: per query word, the terms it matches; and every term matched. */
export interface TextQuery {
  words: TermMatch[][];
  terms: ReadonlySet<string>;
}

/** Slots and their BM25 scores. */
export interface TextScores {
  slots: Int32Array;
  scores: Float64Array;
}
