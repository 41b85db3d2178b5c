/**
 * What the full-text side of an index costs in memory, estimated from what it holds: its distinct terms, their
 * postings and repeats, the inflected words of its second tree, and its typed arrays.
 */

/**
 * Memory of the parts of the index, measured as V8's heap after full collections against what the index holds, on
 * texts of shared, unique and inflected words (see docs/benchmarks.md). A slot-term pair is its place in a holders
 * list, with the list's spare room; holders are lists rather than a `Set` per term, which took about twice as much.
 */
const BYTES_PER_POSTING = 12;
/** Memory per repeated term of a slot: its entry in the term's map of counts. */
const BYTES_PER_REPEAT = 35;
/**
 * Memory per distinct term: its node in the radix tree (with the node's own map and set), its holders list and its
 * entry in the map of holders. A vocabulary of unique words (ids, codes, names) costs mostly this.
 */
const BYTES_PER_TERM = 880;
/** Memory per word of the second tree: its node, with its map and set, and its share of a parent's children. */
const BYTES_PER_VARIANT = 560;

/** What a full-text index holds, for its memory estimate. */
export interface TextIndexCounts {
  /** Slot-term pairs. */
  postings: number;
  /** Slot-term pairs whose term the slot's text holds more than once. */
  repeats: number;
  /** Distinct terms. */
  terms: number;
  /** Words of the second tree (inflected forms whose term differs). */
  variants: number;
  /** Bytes of its typed arrays (lengths and a search's scratch). */
  arrayBytes: number;
}

/** The estimated bytes of a full-text index that holds `counts`. */
export function textIndexBytes(counts: TextIndexCounts): number {
  return counts.postings * BYTES_PER_POSTING + counts.repeats * BYTES_PER_REPEAT + counts.terms * BYTES_PER_TERM +
    counts.variants * BYTES_PER_VARIANT + counts.arrayBytes;
}
