/**
 * An index's synonyms, compiled once per version of its settings for the index's language: each word or phrase is read
 * as a query is (folded, stemmed, stop words dropped), and a map leads from each phrase a query may hold to the groups
 * of phrases it also finds. A `words` entry is one group that each of its phrases leads to (each finds the others); a
 * one-way entry leads from its `from` to the group of its `to`. Groups are shared, not expanded into pairs, so that an
 * entry of 100 words costs 100 places, not 9,900.
 */
import type { Analyzer } from "./analyzer.ts";

/** A synonym entry as settings hold it. */
export type SynonymInput = { words: readonly string[] } | { from: string; to: readonly string[] };

/** A phrase as the terms a query of it matches, in order. */
export type Phrase = readonly string[];

/** Compiled synonyms: per phrase (its terms joined by spaces), the groups of phrases it also finds. */
export interface SynonymMap {
  readonly groups: ReadonlyMap<string, readonly (readonly Phrase[])[]>;
  /** The most terms of a phrase that leads somewhere: how far a query is looked at from each of its words. */
  readonly longest: number;
  /** How many entries it was compiled from. */
  readonly entries: number;
}

/** The terms of `text` as the index reads a query: folded words without stop words (unless nothing else), stemmed. */
export function queryTerms(analyzer: Analyzer, text: string): string[] {
  return analyzer.queryWords(text).map((word) => analyzer.stem(word));
}

/** The key of a phrase in a {@link SynonymMap}. */
export function phraseKey(terms: Phrase): string {
  return terms.join(" ");
}

/** Compiles synonym entries for the language of `analyzer`; undefined when there are none. */
export function compileSynonyms(entries: readonly SynonymInput[], analyzer: Analyzer): SynonymMap | undefined {
  const groups = new Map<string, Phrase[][]>();
  let longest = 0;
  const lead = (from: Phrase, group: Phrase[]) => {
    if (from.length === 0) return;
    const key = phraseKey(from);
    let list = groups.get(key);
    if (list === undefined) groups.set(key, list = []);
    list.push(group);
    longest = Math.max(longest, from.length);
  };
  for (const entry of entries) {
    if ("words" in entry) {
      const group = entry.words.map((phrase) => queryTerms(analyzer, phrase)).filter((terms) => terms.length > 0);
      for (const phrase of distinct(group)) lead(phrase, group);
    } else {
      const group = entry.to.map((phrase) => queryTerms(analyzer, phrase)).filter((terms) => terms.length > 0);
      lead(queryTerms(analyzer, entry.from), group);
    }
  }
  return groups.size === 0 ? undefined : { groups, longest, entries: entries.length };
}

/** The phrases of a group, each once. */
function distinct(phrases: Phrase[]): Phrase[] {
  const seen = new Map<string, Phrase>();
  for (const phrase of phrases) seen.set(phraseKey(phrase), phrase);
  return [...seen.values()];
}

/**
 * The phrases a query's terms hold that lead somewhere, found left to right, the longest first at each place, and
 * not overlapping: each with where it starts, how many terms it spans, and the phrases it also finds (never itself).
 */
export function synonymMatches(
  synonyms: SynonymMap,
  terms: readonly string[],
): { start: number; length: number; targets: Phrase[] }[] {
  const matches: { start: number; length: number; targets: Phrase[] }[] = [];
  let start = 0;
  while (start < terms.length) {
    let length = Math.min(synonyms.longest, terms.length - start);
    for (; length > 0; length--) {
      const key = length === 1 ? terms[start]! : phraseKey(terms.slice(start, start + length));
      const groups = synonyms.groups.get(key);
      if (groups === undefined) continue;
      const targets = new Map<string, Phrase>();
      for (const group of groups) {
        for (const phrase of group) {
          const target = phraseKey(phrase);
          if (target !== key) targets.set(target, phrase);
        }
      }
      if (targets.size > 0) matches.push({ start, length, targets: [...targets.values()] });
      break;
    }
    start += Math.max(1, length);
  }
  return matches;
}
