/**
 * Synonyms at query time: a full-text query as the text index matches it, with the phrases that the query's words
 * (or phrases) also find added to it, so that BM25 scores them as it scores typos and prefixes.
 *
 * A synonym's match weighs {@link SYNONYM_WEIGHT} of the query words it stands for, in their own inverse document
 * frequency: its weight is scaled by `idf(query word) / idf(synonym)`. So a document holding the synonym scores half
 * of what the same document holding the query's word scores, however rare either word is, and an exact match ranks
 * above a synonym match of the same BM25 weight. A one-word synonym joins the matches of each query word it stands for (a document counts its best match per
 * word, as for typos). A phrase of several words counts as all of its words: each word that is not already a query word
 * becomes a word of the query of its own, weighted so that a document holding all of them scores the same half; a
 * document holding some of them scores a part of it, as a query of those words would.
 */
import { type Phrase, type SynonymMap, synonymMatches } from "../fulltext/synonyms.ts";
import type { TermMatch, TextQuery } from "./text_query.ts";

/**
 * What a synonym's match weighs against the query word's own, in the query word's inverse document frequency: as much
 * as a match with one typo. On the hand-labelled query set of `tests/unit/synonym_relevance_test.ts`, 0.9 let a
 * shorter document holding a synonym outrank the one holding the query's words in 4 of 10 queries (BM25 favours short
 * texts), 0.6 to 0.8 in 1, and 0.5 in none, for a mean nDCG@10 of 0.970 against 0.979 at 0.9.
 */
export const SYNONYM_WEIGHT = 0.5;

/**
 * `query` with the synonyms of its terms added: `terms` are the query's distinct words as terms, in the order of
 * `query.words` (one list of matches per word), and `idf` gives a term's inverse document frequency in the index.
 */
export function withSynonyms(
  query: TextQuery,
  terms: readonly string[],
  synonyms: SynonymMap,
  idf: (term: string) => number,
): TextQuery {
  if (terms.length !== query.words.length) {
    throw new RangeError(`A query of ${query.words.length} words cannot take synonyms of ${terms.length} terms`);
  }
  const matches = synonymMatches(synonyms, terms);
  if (matches.length === 0) return query;
  const words = query.words.map((list) => [...list]);
  const matched = new Set(query.terms);
  for (const { start, length, targets } of matches) {
    const sources = terms.slice(start, start + length);
    const sourceIdfs = sources.map(idf);
    const single = targets.filter((phrase) => phrase.length === 1);
    for (const [term] of single as [string][]) {
      matched.add(term);
      const idfOf = idf(term);
      sourceIdfs.forEach((source, i) => offer(words[start + i]!, term, SYNONYM_WEIGHT * source / idfOf));
    }
    const own = new Set(sources);
    const extra = [...new Set(targets.filter((phrase) => phrase.length > 1).flat())].filter((term) => !own.has(term));
    const total = sourceIdfs.reduce((sum, value) => sum + value, 0);
    for (const term of extra) {
      matched.add(term);
      words.push([{ term, weight: SYNONYM_WEIGHT * total / (extra.length * idf(term)) }]);
    }
    for (const term of multiWordTerms(targets)) matched.add(term);
  }
  return { words, terms: matched };
}

/** Sets a term's weight among a word's matches to `weight` where that is more than it has. */
function offer(list: TermMatch[], term: string, weight: number): void {
  // The matches are the query's own objects: replaced, never changed.
  const at = list.findIndex((candidate) => candidate.term === term);
  if (at === -1) list.push({ term, weight });
  else if (weight > list[at]!.weight) list[at] = { term, weight };
}

/** Every term of the phrases of several words: highlights mark each of them. */
function multiWordTerms(targets: readonly Phrase[]): string[] {
  return targets.filter((phrase) => phrase.length > 1).flat();
}

/** BM25's inverse document frequency of a term that `holders` of `docs` documents hold, as the text index weighs it. */
export function inverseDocumentFrequency(docs: number, holders: number): number {
  return Math.log(1 + (docs - holders + 0.5) / (holders + 0.5));
}
