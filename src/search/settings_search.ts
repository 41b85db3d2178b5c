/**
 * A search with an index's settings applied: its synonyms added to the full-text query (in `fulltext` mode and the
 * full-text half of `hybrid`), and the documents pinned for the query first.
 *
 * Pins page with the rest: the pinned documents that exist and pass the filter take the first places, in their
 * order, and the ranking without them follows, so that `offset` and `limit` cut one list and `total` counts each
 * document once. A pinned hit has no score of its own: its place comes from the pin.
 */
import type { SearchIndex } from "./search_index.ts";
import type { ScoredDoc, SearchPage, SearchQuery } from "./search_query.ts";
import type { SynonymMap } from "../fulltext/synonyms.ts";
import { inverseDocumentFrequency, withSynonyms } from "./synonym_query.ts";
import type { TextQuery } from "./text_query.ts";

/** What an index's settings add to one search. */
export interface SearchSettings {
  synonyms?: SynonymMap | undefined;
  /** The ids pinned for this search's query, in order. */
  pinned?: readonly string[] | undefined;
}

/**
 * Runs `query` on `index` with its synonyms and pins; `run` is the search itself (the index's, or one that wraps it),
 * given the query with its synonyms.
 */
export function searchWithSettings(
  index: SearchIndex,
  settings: SearchSettings,
  query: SearchQuery,
  run: (query: SearchQuery) => SearchPage = (expanded) => index.search(expanded),
): SearchPage {
  const expanded = query.mode === "vector" || settings.synonyms === undefined
    ? query
    : { ...query, textQuery: synonymTextQuery(index, query, settings.synonyms) };
  return settings.pinned === undefined || settings.pinned.length === 0
    ? run(expanded)
    : pinnedSearch(index, expanded, settings.pinned, run);
}

/** The full-text query of `query` with its synonyms. */
export function synonymTextQuery(index: SearchIndex, query: SearchQuery, synonyms: SynonymMap): TextQuery {
  const base = index.textQuery(query.text, query.match);
  // One list of matches per distinct query word, as the text index makes them.
  const analyzer = index.analyzer;
  const terms = [...new Set(analyzer.queryWords(query.text))].map((word) => analyzer.stem(word));
  const docs = index.size;
  return withSynonyms(base, terms, synonyms, (term) => inverseDocumentFrequency(docs, holdersOf(index, term)));
}

/** The pinned documents that exist and pass the filter first, then the ranking without them. */
function pinnedSearch(
  index: SearchIndex,
  query: SearchQuery,
  pinned: readonly string[],
  run: (query: SearchQuery) => SearchPage,
): SearchPage {
  const { filter, offset, limit } = query;
  const pins = [...new Set(pinned)].filter((id) => {
    const content = index.content(id);
    return content !== undefined && (filter === undefined || filter(content.metadata));
  });
  if (pins.length === 0) return run(query);
  // The ranking's first `offset + limit` places hold at most `pins.length` pinned documents to leave out.
  const page = run({ ...query, offset: 0, limit: offset + limit });
  const isPinned = new Set(pins);
  const rest = page.hits.filter((hit) => !isPinned.has(hit.id))
    .slice(Math.max(0, offset - pins.length), Math.max(0, offset + limit - pins.length));
  const first = pins.slice(offset, offset + limit).map((id): ScoredDoc => ({ id, score: 0, pinned: true }));
  // Vector and hybrid searches count every document that passes the filter; full-text ones only those that match.
  const unmatched = query.mode === "fulltext" ? pins.filter((id) => !holdsAny(index, id, page.terms)).length : 0;
  return { ...page, hits: [...first, ...rest], total: page.total + unmatched };
}

/** Whether the text of document `id` holds any of `terms`. */
function holdsAny(index: SearchIndex, id: string, terms: ReadonlySet<string> | undefined): boolean {
  if (terms === undefined) return false;
  return index.analyzer.terms(index.content(id)!.text).some((term) => terms.has(term));
}

/** Per index, at one revision: how many documents hold each term asked about. */
const holderCounts = new WeakMap<SearchIndex, { revision: number; counts: Map<string, number> }>();
/** Terms remembered per index and revision before the memo starts over. */
const MAX_COUNTS = 10_000;

/** How many documents of `index` hold `term`: counted once per revision of the index, by a search of the term. */
function holdersOf(index: SearchIndex, term: string): number {
  let memo = holderCounts.get(index);
  if (memo === undefined || memo.revision !== index.revision || memo.counts.size >= MAX_COUNTS) {
    holderCounts.set(index, memo = { revision: index.revision, counts: new Map() });
  }
  let count = memo.counts.get(term);
  if (count === undefined) {
    const textQuery: TextQuery = { words: [[{ term, weight: 1 }]], terms: new Set([term]) };
    count = index.search({ mode: "fulltext", text: "", textQuery, offset: 0, limit: 1 }).total;
    memo.counts.set(term, count);
  }
  return count;
}
