/** Picks the passage of a document that a full-text match is about. */
import { tokenize } from "../search/tokenize.ts";
import type { PassageSpan } from "../search/search_index.ts";

/** The index of the passage that holds the most occurrences of the query's terms; the first one on a tie. */
export function passageByTerms(text: string, spans: PassageSpan[], query: string): number {
  if (spans.length < 2) return 0;
  const terms = new Set(tokenize(query));
  let best = 0;
  let bestCount = -1;
  spans.forEach(({ start, end }, i) => {
    const count = tokenize(text.slice(start, end)).filter((term) => terms.has(term)).length;
    if (count > bestCount) [best, bestCount] = [i, count];
  });
  return best;
}
