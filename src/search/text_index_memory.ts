/**
 * What the full-text side of an index costs in memory, estimated from what it holds: its distinct terms, their
 * postings and repeats, the inflected words of its second set, and its typed arrays.
 *
 * The figures are V8's heap after full collections, measured part by part (see docs/benchmarks.md); Deno's V8 has no
 * pointer compression, so each reference and each small integer in an array takes 8 bytes.
 */

/**
 * Per distinct term: its entry in the map of holders (with the map's spare room), its string, and its place in the
 * sorted set of terms. A term held by one slot costs only this.
 */
const BYTES_PER_TERM = 85;
/** Per term held by more than one slot: its list (an object and an array). */
const BYTES_PER_LIST = 96;
/** Per slot in a list, with the spare room of an array that grows by `push`. */
const BYTES_PER_LISTED_POSTING = 10;
/** Per term that some slot holds more than once: its map of counts, and that map's entry. */
const BYTES_PER_REPEAT_MAP = 220;
/** Per slot that holds a term more than once: its entry in the term's map of counts. */
const BYTES_PER_REPEAT = 37;
/** Per word of the second set: its string and its place in the set. */
const BYTES_PER_VARIANT = 46;

/** What a full-text index holds, for its memory estimate. */
export interface TextIndexCounts {
  /** Slot-term pairs. */
  postings: number;
  /** Distinct terms. */
  terms: number;
  /** Terms held by more than one slot, each with a list of its own. */
  lists: number;
  /** Slot-term pairs whose term the slot's text holds more than once. */
  repeats: number;
  /** Terms with such pairs. */
  repeatedTerms: number;
  /** Words of the second set (inflected forms whose term differs). */
  variants: number;
  /** Bytes of its typed arrays (lengths and a search's scratch). */
  arrayBytes: number;
}

/** The estimated bytes of a full-text index that holds `counts`. */
export function textIndexBytes(counts: TextIndexCounts): number {
  // Every term held by one slot holds it in the map itself; the other postings are in lists.
  const listedPostings = counts.postings - (counts.terms - counts.lists);
  return counts.terms * BYTES_PER_TERM + counts.lists * BYTES_PER_LIST + listedPostings * BYTES_PER_LISTED_POSTING +
    counts.repeatedTerms * BYTES_PER_REPEAT_MAP + counts.repeats * BYTES_PER_REPEAT +
    counts.variants * BYTES_PER_VARIANT + counts.arrayBytes;
}
