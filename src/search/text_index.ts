/**
 * Okapi BM25 full-text scoring over Orama's radix tree. The tree maps each term to the set of slots (documents) that
 * hold it; beside it this index keeps what BM25 needs: each document's length and the counts of its repeated terms.
 * Terms match exactly: no prefixes, no typo tolerance.
 *
 * Every statistic is an integer count, so the same documents give the same scores however the index was built:
 * written live, loaded from a snapshot or rebuilt.
 */
import { radix } from "@orama/orama/trees";
import { tokenize } from "./tokenize.ts";
import type { SlotScores } from "./vector_store.ts";

/** BM25 term-frequency saturation (k1) and length normalisation (b), as in Lucene. */
const K1 = 1.2;
const B = 0.75;

/** One term's postings: the slots holding it and, in the same order, how often each holds it. */
export interface Posting {
  term: string;
  slots: readonly number[] | Uint32Array;
  counts: readonly number[] | Uint32Array;
}

/** Memory per slot-term pair, measured on Debian word-list prose: a set entry, its share of the tree and repeats. */
const BYTES_PER_POSTING = 48;

/** A full-text index of document texts, by slot. */
export class TextIndex {
  readonly #tree = new radix.RadixTree();
  #lengths = new Uint32Array(0);
  /** Per term, the slots that hold it more than once, with their counts; every other holder holds it once. */
  readonly #repeats = new Map<string, Map<number, number>>();
  #docs = 0;
  #totalLength = 0;
  /** Slot-term pairs held: what the index's memory grows with. */
  #postings = 0;
  #factors: { lengthNorms: Float64Array; singles: Float64Array } | undefined;

  /** Indexes the text of an empty slot. */
  add(slot: number, text: string): void {
    let length = 0;
    for (const [term, count] of termCounts(text)) {
      this.#tree.insert(term, slot);
      this.#postings++;
      length += count;
      if (count > 1) this.#repeatsOf(term).set(slot, count);
    }
    this.#setLength(slot, length);
  }

  /** Removes the text that {@link add} indexed for `slot`; `text` must be that same text. */
  remove(slot: number, text: string): void {
    for (const [term, count] of termCounts(text)) {
      const node = this.#node(term);
      if (node?.d.delete(slot)) this.#postings--;
      if (node?.d.size === 0) this.#tree.removeWord(term);
      if (count > 1) this.#repeats.get(term)?.delete(slot);
    }
    this.#docs--;
    this.#totalLength -= this.#lengths[slot]!;
    this.#lengths[slot] = 0;
    this.#factors = undefined;
  }

  /** The BM25 score of every slot that holds at least one term of `query` and that `keep` accepts. */
  scores(query: string, keep?: (slot: number) => boolean): SlotScores {
    const result: SlotScores = { slots: [], scores: [] };
    if (this.#docs === 0) return result;
    const { lengthNorms, singles } = this.#lengthFactors();
    const sums = new Float64Array(lengthNorms.length);
    const touched: number[] = [];
    for (const term of termCounts(query).keys()) {
      const holders = this.#node(term)?.d;
      if (holders === undefined || holders.size === 0) continue;
      const idf = Math.log(1 + (this.#docs - holders.size + 0.5) / (holders.size + 0.5));
      // Every holder as if it held the term once, then the few that hold it more often get the difference.
      for (const slot of holders) {
        if (sums[slot] === 0) touched.push(slot);
        sums[slot]! += idf * singles[slot]!;
      }
      for (const [slot, tf] of this.#repeats.get(term) ?? []) {
        sums[slot]! += idf * (tf * (K1 + 1) / (tf + lengthNorms[slot]!) - singles[slot]!);
      }
    }
    for (const slot of touched) {
      if (keep !== undefined && !keep(slot)) continue;
      result.slots.push(slot);
      result.scores.push(sums[slot]!);
    }
    return result;
  }

  /**
   * Per slot, BM25's length normalisation `k1 × (1 − b + b × len / avglen)` and the score factor of a term held once,
   * computed once per change of the index, not once per posting.
   */
  #lengthFactors(): { lengthNorms: Float64Array; singles: Float64Array } {
    if (this.#factors === undefined) {
      const meanLength = this.#totalLength / this.#docs;
      const lengths = this.#lengths;
      const lengthNorms = new Float64Array(lengths.length);
      const singles = new Float64Array(lengths.length);
      for (let slot = 0; slot < lengths.length; slot++) {
        lengthNorms[slot] = K1 * (1 - B + B * lengths[slot]! / meanLength);
        singles[slot] = (K1 + 1) / (1 + lengthNorms[slot]!);
      }
      this.#factors = { lengthNorms, singles };
    }
    return this.#factors;
  }

  /** Every term's postings and every slot's length, for a snapshot. */
  *postings(): Generator<Posting> {
    const stack: radix.RadixNode[] = [this.#tree];
    while (stack.length > 0) {
      const node = stack.pop()!;
      if (node.e && node.d.size > 0) {
        const slots = [...node.d];
        const repeats = this.#repeats.get(node.w);
        yield { term: node.w, slots, counts: slots.map((slot) => repeats?.get(slot) ?? 1) };
      }
      stack.push(...node.c.values());
    }
  }

  /** Bytes of memory it holds, estimated from its postings (a radix tree of terms, each with a set of slots). */
  get bytes(): number {
    return this.#postings * BYTES_PER_POSTING + this.#lengths.byteLength;
  }

  /** The number of terms (repeats included) in the text of a slot. */
  length(slot: number): number {
    return this.#lengths[slot] ?? 0;
  }

  /**
   * Rebuilds an index of `docs` documents from snapshot postings and per-slot lengths, without tokenizing.
   */
  static fromPostings(postings: Iterable<Posting>, lengths: Uint32Array, docs: number): TextIndex {
    const index = new TextIndex();
    for (const { term, slots, counts } of postings) {
      if (slots.length === 0) continue;
      index.#tree.insert(term, slots[0]!);
      const holders = index.#node(term)!.d;
      // A plain loop: building a Set from a typed array's iterator was the slowest part of a snapshot load.
      for (let i = 1; i < slots.length; i++) holders.add(slots[i]!);
      index.#postings += slots.length;
      for (let i = 0; i < counts.length; i++) {
        if (counts[i]! > 1) index.#repeatsOf(term).set(slots[i]!, counts[i]!);
      }
    }
    index.#lengths = lengths.slice();
    index.#docs = docs;
    for (const length of lengths) index.#totalLength += length;
    return index;
  }

  #repeatsOf(term: string): Map<number, number> {
    let repeats = this.#repeats.get(term);
    if (repeats === undefined) this.#repeats.set(term, repeats = new Map());
    return repeats;
  }

  #setLength(slot: number, length: number): void {
    if (slot >= this.#lengths.length) {
      const lengths = new Uint32Array(Math.max(16, slot + 1, this.#lengths.length * 2));
      lengths.set(this.#lengths);
      this.#lengths = lengths;
    }
    this.#lengths[slot] = length;
    this.#docs++;
    this.#totalLength += length;
    this.#factors = undefined;
  }

  /** The radix node where exactly `term` ends, if any. */
  #node(term: string): radix.RadixNode | undefined {
    let node: radix.RadixNode = this.#tree;
    let at = 0;
    while (at < term.length) {
      const child = node.c.get(term[at]!);
      if (child === undefined || !term.startsWith(child.s, at)) return undefined;
      node = child;
      at += child.s.length;
    }
    return node.e ? node : undefined;
  }
}

function termCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const term of tokenize(text)) counts.set(term, (counts.get(term) ?? 0) + 1);
  return counts;
}
