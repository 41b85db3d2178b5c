/** The text a cross-encoder reads of a search hit: its best passage, as the hit's `passage` shows it. */
import type { SearchIndex } from "../search/search_index.ts";
import type { ScoredDoc } from "../search/search_query.ts";
import { passageByMatches } from "../passages/passage_by_matches.ts";
import { highlightRanges, type TextRange, textWords } from "../fulltext/highlights.ts";
import { passageSpansOf } from "../search/indexed_doc.ts";

/**
 * The most characters of a passage that a cross-encoder is given. Its window (512 tokens for most) covers fewer, and
 * the pair is cut to the window anyway; this only spares tokenizing a long document's whole text (an index on an
 * external model keeps each document as one passage).
 */
export const MAX_HIT_TEXT_CHARS = 4_096;

/**
 * The best passage of a hit: the one its vector score came from, or the one holding most of the query's matched terms
 * (`terms`). A passage longer than {@link MAX_HIT_TEXT_CHARS} is read from its start, or from its first matched word
 * when that lies past them.
 */
export function hitText(index: SearchIndex, hit: ScoredDoc, terms: ReadonlySet<string>): string {
  const content = index.content(hit.id, hit.slot)!;
  const text = content.text;
  const spans = passageSpansOf(content);
  let highlights: TextRange[] | undefined;
  const highlightsOf = () => highlights ??= highlightRanges(textWords(text, index.analyzer), terms);
  const { start, end } = spans[hit.passage ?? (spans.length < 2 ? 0 : passageByMatches(spans, highlightsOf()))]!;
  if (end - start <= MAX_HIT_TEXT_CHARS) return text.slice(start, end);
  const firstMatch = highlightsOf().find((range) => range.start >= start && range.end <= end);
  const from = firstMatch !== undefined && firstMatch.end > start + MAX_HIT_TEXT_CHARS ? firstMatch.start : start;
  return text.slice(from, Math.min(end, from + MAX_HIT_TEXT_CHARS));
}
