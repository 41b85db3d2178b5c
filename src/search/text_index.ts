/**
 * Okapi BM25 full-text scoring. Each term (a stemmed word, see {@link Analyzer}) has the slots (documents) that hold it
 * ({@link TermPostings}), and a sorted set holds the terms, so that typos and prefixes are walked to without a scan of
 * every term (see `word_walks.ts`); beside them this index keeps what BM25 needs: each document's length and the counts
 * of its repeated terms. A second set holds the words whose term differs from them ("running" for "run"), so that
 * typos and prefixes are matched against the words people type.
 *
 * A query word matches its own term exactly, and, as asked, the terms within a few typos of it and, for the last word,
 * those it is a prefix of. A document scores each query word by its best match, weighted down for typos and prefixes,
 * so that an exact match ranks above a typo or prefix match of the same BM25 weight, and fewer typos above more.
 *
 * Every statistic is an integer count, so the same documents give the same scores however the index was built:
 * written live, loaded from a snapshot or rebuilt.
 */
import { type Analyzer, analyzerFor } from "../fulltext/analyzer.ts";
import { grownTo } from "../util/typed_arrays.ts";
import { wordsWithin, wordsWithPrefix } from "../fulltext/word_walks.ts";
import { SortedWords } from "../fulltext/sorted_words.ts";
import { TermPostings } from "../fulltext/term_postings.ts";
import { textIndexBytes } from "./text_index_memory.ts";
import type { MatchOptions, TextQuery, TextScores } from "./text_query.ts";

/** BM25 term-frequency saturation (k1) and length normalisation (b), as in Lucene. */
const K1 = 1.2;
const B = 0.75;

/** One term's postings: the slots holding it and, in the same order, how often each holds it. */
export interface Posting {
  term: string;
  slots: readonly number[] | Uint32Array;
  counts: readonly number[] | Uint32Array;
}

/** A {@link TextIndex} being restored from a snapshot: its postings, a term at a time, then its words. */
export interface TextIndexRestore {
  posting(term: string, slots: ArrayLike<number>, counts: ArrayLike<number>): void;
  finish(variants: Iterable<string>): TextIndex;
}

/** Query words of at least this many characters match with one typo, and with two from the second length. */
export const TYPO_LENGTHS = [5, 9] as const;
/** The weight of a match with one typo and with two, against an exact match's 1. */
const TYPO_WEIGHTS = [1, 0.5, 0.3] as const;
/** The weight of a word the last query word is a prefix of. */
const PREFIX_WEIGHT = 0.7;
/** Words a prefix expands to, the most common first; of at most this many visited. */
const PREFIX_EXPANSIONS = 50;
const PREFIX_VISITS = 2_000;

/** A term a query word matches, as scoring reads it. */
interface MatchedTerm {
  holders: readonly number[];
  /** The term's inverse document frequency, times the match's weight. */
  idf: number;
  repeats: Map<number, number> | undefined;
}

/** A full-text index of document texts, by slot. */
export class TextIndex {
  readonly analyzer: Analyzer;
  /** The terms some slot holds, in order, for the typo and prefix walks; their holders are in {@link #holders}. */
  #terms = new SortedWords();
  readonly #holders = new TermPostings();
  /** Words whose term is not the word itself: what typos and prefixes are matched against besides the terms. */
  #variants = new SortedWords();
  #lengths = new Uint32Array(0);
  /** Per term, the slots that hold it more than once, with their counts; every other holder holds it once. */
  readonly #repeats = new Map<string, Map<number, number>>();
  #docs = 0;
  #totalLength = 0;
  /** Slot-term pairs held: what the index's memory grows with. */
  #postings = 0;
  /** Entries of {@link #repeats}: slot-term pairs whose term the slot's text holds more than once. */
  #repeatCount = 0;
  #factors: { lengthNorms: Float64Array; singles: Float64Array } | undefined;
  /**
   * Per slot, a search's running BM25 sum and the best match of its current query word: kept between searches (each
   * search zeroes what it set), since allocating them per search was a large share of its time.
   */
  #sums = new Float64Array(0);
  #bestMatches = new Float64Array(0);
  /**
   * The slots a search gave a sum and a best match, each once: kept between searches too, since arrays of tens of
   * thousands of numbers made per search went straight to V8's old generation and grew the heap by tens of MiB.
   */
  #touched = new Int32Array(0);
  #bestTouched = new Int32Array(0);
  /** The scores of a search's matches, in the order of its slots; kept between searches too. */
  #found = new Float64Array(0);

  constructor(analyzer: Analyzer = analyzerFor()) {
    this.analyzer = analyzer;
  }

  /** Indexes the text of an empty slot. */
  add(slot: number, text: string): void {
    let length = 0;
    const counts = new Map<string, number>();
    for (const { surface, term } of this.analyzer.words(text)) {
      counts.set(term, (counts.get(term) ?? 0) + 1);
      if (surface !== term) this.#variants.add(surface);
    }
    for (const [term, count] of counts) {
      if (this.#holders.add(term, slot)) this.#terms.add(term);
      this.#postings++;
      length += count;
      if (count > 1) this.#addRepeat(term, slot, count);
    }
    this.#setLength(slot, length);
  }

  /** Removes the text that {@link add} indexed for `slot`; `text` must be that same text. */
  remove(slot: number, text: string): void {
    for (const [term, count] of this.termCounts(text)) {
      const left = this.#holders.delete(term, slot);
      if (left < 0) continue;
      this.#postings--;
      if (left === 0) this.#terms.delete(term);
      if (count > 1) this.#removeRepeat(term, slot);
    }
    this.#docs--;
    this.#totalLength -= this.#lengths[slot]!;
    this.#lengths[slot] = 0;
    this.#factors = undefined;
  }

  /**
   * The terms each word of `query` matches here, as `options` allow. With `options.enough`, a word that some document
   * holds as it is is taken as meant (Typesense's rule): its typos are looked up only when fewer documents than that
   * hold any term the query matches without them, so that a query of real words costs what an exact one does.
   */
  query(query: string, options: MatchOptions): TextQuery {
    const words = [...new Set(this.analyzer.queryWords(query))];
    const stems = words.map((surface) => this.analyzer.stem(surface));
    const known = stems.map((stem) => this.#holders.count(stem) > 0);
    const expandAll = options.enough === undefined;
    const found = words.map((surface, i) => {
      const weights = new Map<string, number>([[stems[i]!, 1]]);
      if (expandAll || !known[i]) this.#offerTypos(weights, surface, options);
      if (options.prefix && i === words.length - 1) {
        for (const term of this.#prefixTerms(surface)) offer(weights, term, PREFIX_WEIGHT);
      }
      return weights;
    });
    if (!expandAll && options.typoTolerance && known.some(Boolean) && this.#leastMatching(found) < options.enough!) {
      for (const [i, surface] of words.entries()) if (known[i]) this.#offerTypos(found[i]!, surface, options);
    }
    const matches = found.map((weights) => [...weights].map(([term, weight]) => ({ term, weight })));
    const terms = new Set(found.flatMap((weights) => [...weights.keys()]));
    return { words: matches, terms };
  }

  /** Offers `weights` the terms within the typos that `surface`'s length allows, each weighted by its typos. */
  #offerTypos(weights: Map<string, number>, surface: string, options: MatchOptions): void {
    const length = [...surface].length;
    const maxEdits = options.typoTolerance ? TYPO_LENGTHS.filter((least) => length >= least).length : 0;
    if (maxEdits === 0) return;
    for (const { word, edits } of wordsWithin(this.#terms, surface, maxEdits)) {
      offer(weights, word, TYPO_WEIGHTS[edits]!);
    }
    for (const { word, edits } of wordsWithin(this.#variants, surface, maxEdits)) {
      offer(weights, this.analyzer.stem(word), TYPO_WEIGHTS[edits]!);
    }
  }

  /** At least how many documents match some word of a query: the most that hold any one of its terms. */
  #leastMatching(found: Map<string, number>[]): number {
    let most = 0;
    for (const weights of found) for (const term of weights.keys()) most = Math.max(most, this.#holders.count(term));
    return most;
  }

  /** The most common terms of the words that `prefix` starts. */
  #prefixTerms(prefix: string): string[] {
    const terms = new Set(wordsWithPrefix(this.#terms, prefix, PREFIX_VISITS));
    for (const word of wordsWithPrefix(this.#variants, prefix, PREFIX_VISITS)) terms.add(this.analyzer.stem(word));
    const holders = (term: string) => this.#holders.count(term);
    return [...terms].filter((term) => holders(term) > 0).sort((a, b) => holders(b) - holders(a) || (a < b ? -1 : 1))
      .slice(0, PREFIX_EXPANSIONS);
  }

  /**
   * Calls `use` with the BM25 score of every slot that matches at least one word of `query` and that `keep` accepts
   * (per query word, the best of its matches, each weighted), and a lookup of any slot's score (0 where it matches
   * nothing). All of them serve only during the call: the slots and scores are views of arrays the next search reuses,
   * and the lookup reads the sums as the search left them, so that a few hundred slots are looked up without a map of
   * every match.
   */
  withScores<T>(
    query: TextQuery,
    keep: ((slot: number) => boolean) | undefined,
    use: (found: TextScores, scoreOf: (slot: number) => number) => T,
  ): T {
    if (this.#docs === 0) return use({ slots: new Int32Array(0), scores: new Float64Array(0) }, () => 0);
    const { lengthNorms, singles } = this.#lengthFactors();
    if (this.#sums.length < lengthNorms.length) {
      this.#sums = new Float64Array(lengthNorms.length);
      this.#bestMatches = new Float64Array(lengthNorms.length);
      this.#touched = new Int32Array(lengthNorms.length);
      this.#bestTouched = new Int32Array(lengthNorms.length);
      this.#found = new Float64Array(lengthNorms.length);
    }
    const sums = this.#sums;
    const touched = this.#touched;
    let touchedCount = 0;
    // Per slot, the best match of the current word; only needed when a word has more than one.
    const best = this.#bestMatches;
    const bestTouched = this.#bestTouched;
    let bestCount = 0;
    try {
      for (const matches of this.#matchedTerms(query)) {
        const alone = matches.length === 1;
        for (const { holders, idf, repeats } of matches) {
          if (alone) {
            // Every holder as if it held the term once, then the few that hold it more often get the difference.
            for (let i = 0; i < holders.length; i++) {
              const slot = holders[i]!;
              if (sums[slot] === 0) touched[touchedCount++] = slot;
              sums[slot]! += idf * singles[slot]!;
            }
            for (const [slot, tf] of repeats ?? []) {
              sums[slot]! += idf * (tf * (K1 + 1) / (tf + lengthNorms[slot]!) - singles[slot]!);
            }
            continue;
          }
          for (let i = 0; i < holders.length; i++) {
            const slot = holders[i]!;
            const tf = repeats?.get(slot);
            const score = idf * (tf === undefined ? singles[slot]! : tf * (K1 + 1) / (tf + lengthNorms[slot]!));
            if (best[slot] === 0) bestTouched[bestCount++] = slot;
            if (score > best[slot]!) best[slot] = score;
          }
        }
        for (let i = 0; i < bestCount; i++) {
          const slot = bestTouched[i]!;
          if (sums[slot] === 0) touched[touchedCount++] = slot;
          sums[slot]! += best[slot]!;
          best[slot] = 0;
        }
        bestCount = 0;
      }
      const slots = keep === undefined
        ? touched.subarray(0, touchedCount)
        : touched.subarray(0, touchedCount).filter((slot) => keep(slot));
      const scores = this.#found.subarray(0, slots.length);
      for (let i = 0; i < slots.length; i++) scores[i] = sums[slots[i]!]!;
      return use({ slots, scores }, (slot) => sums[slot] ?? 0);
    } finally {
      for (let i = 0; i < touchedCount; i++) sums[touched[i]!] = 0;
      for (let i = 0; i < bestCount; i++) best[bestTouched[i]!] = 0;
    }
  }

  /** Per query word, the terms it matches that some slot holds: their holders, weighted idf and repeat counts. */
  #matchedTerms(query: TextQuery): MatchedTerm[][] {
    return query.words.map((matches) =>
      matches.flatMap(({ term, weight }) => {
        const holders = this.#holders.slots(term);
        if (holders === undefined) return [];
        const idf = weight * Math.log(1 + (this.#docs - holders.length + 0.5) / (holders.length + 0.5));
        return [{ holders, idf, repeats: this.#repeats.get(term) }];
      })
    );
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

  /** How often each term occurs in `text`, as this index counts them. */
  termCounts(text: string): Map<string, number> {
    const counts = new Map<string, number>();
    for (const term of this.analyzer.terms(text)) counts.set(term, (counts.get(term) ?? 0) + 1);
    return counts;
  }

  /** Every term some slot holds, in order, for a snapshot: a load then takes them as they come, unsorted again. */
  terms(): string[] {
    return this.#terms.words();
  }

  /** Every word of the second set, for a snapshot: the caller keeps those whose terms it stores. */
  variantWords(): string[] {
    return this.#variants.words();
  }

  /** The slots that hold `term`, but those `skip` names, and how often each holds it. */
  posting(term: string, skip: (slot: number) => boolean): { term: string; slots: number[]; counts: number[] } {
    const slots: number[] = [];
    const counts: number[] = [];
    const repeats = this.#repeats.get(term);
    for (const slot of this.#holders.slots(term) ?? []) {
      if (skip(slot)) continue;
      slots.push(slot);
      counts.push(repeats?.get(slot) ?? 1);
    }
    return { term, slots, counts };
  }

  /** Bytes of memory it holds, estimated from its terms, their postings and repeats, and the words of the second set. */
  get bytes(): number {
    const arrays = [this.#lengths, this.#sums, this.#bestMatches, this.#touched, this.#bestTouched, this.#found];
    return textIndexBytes({
      postings: this.#postings,
      repeats: this.#repeatCount,
      terms: this.#holders.terms,
      lists: this.#holders.lists,
      repeatedTerms: this.#repeats.size,
      variants: this.#variants.size,
      arrayBytes: arrays.reduce((sum, array) => sum + array.byteLength, 0),
    });
  }

  /** The number of terms (repeats included) in the text of a slot. */
  length(slot: number): number {
    return this.#lengths[slot] ?? 0;
  }

  /**
   * Rebuilds an index of `docs` documents from a snapshot's per-slot lengths, postings and words, without tokenizing:
   * each posting is taken as it is read (its arrays may be reused after the call), so that a load makes no object per
   * term beyond what the index keeps.
   */
  static restoring(analyzer: Analyzer, lengths: Uint32Array, docs: number): TextIndexRestore {
    const index = new TextIndex(analyzer);
    index.#lengths = lengths.slice();
    index.#docs = docs;
    for (const length of lengths) index.#totalLength += length;
    return {
      posting(term, slots, counts) {
        if (slots.length === 0) return;
        index.#holders.set(term, slots);
        index.#postings += slots.length;
        for (let i = 0; i < counts.length; i++) {
          if (counts[i]! > 1) index.#addRepeat(term, slots[i]!, counts[i]!);
        }
      },
      finish(variants) {
        index.#variants = SortedWords.from(variants);
        index.#terms = SortedWords.from(index.#holders.keys());
        return index;
      },
    };
  }

  #addRepeat(term: string, slot: number, count: number): void {
    let repeats = this.#repeats.get(term);
    if (repeats === undefined) this.#repeats.set(term, repeats = new Map());
    repeats.set(slot, count);
    this.#repeatCount++;
  }

  /** Forgets a slot's count of a term, and the term's map of counts once it is empty, so that churn leaves none. */
  #removeRepeat(term: string, slot: number): void {
    const repeats = this.#repeats.get(term);
    if (repeats === undefined || !repeats.delete(slot)) return;
    this.#repeatCount--;
    if (repeats.size === 0) this.#repeats.delete(term);
  }

  #setLength(slot: number, length: number): void {
    if (slot >= this.#lengths.length) {
      this.#lengths = grownTo(this.#lengths, Math.max(16, slot + 1, this.#lengths.length * 2));
    }
    this.#lengths[slot] = length;
    this.#docs++;
    this.#totalLength += length;
    this.#factors = undefined;
  }
}

/** Keeps the better of a term's weights in `weights`. */
function offer(weights: Map<string, number>, term: string, weight: number): void {
  if (weight > (weights.get(term) ?? 0)) weights.set(term, weight);
}
