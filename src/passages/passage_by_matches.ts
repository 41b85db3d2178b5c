/** Picks the passage of a document that a full-text match is about. */
import type { TextRange } from "../fulltext/highlights.ts";
import type { PassageSpan } from "../search/indexed_doc.ts";

/** The index of the passage that holds the most of the matched words `matches`; the first one on a tie. */
export function passageByMatches(spans: PassageSpan[], matches: TextRange[]): number {
  let best = 0;
  let bestCount = -1;
  spans.forEach(({ start, end }, i) => {
    const count = matches.filter((match) => match.start >= start && match.end <= end).length;
    if (count > bestCount) [best, bestCount] = [i, count];
  });
  return best;
}
