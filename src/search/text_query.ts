/** A full-text query as the text index matches it, and the scores it answers with. */

/** How a query's words match: with typos, and the last one as a prefix. */
export interface MatchOptions {
  typoTolerance: boolean;
  prefix: boolean;
}

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
