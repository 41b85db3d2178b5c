/**
 * Where a query's matches are in a text: the range of every word whose term the query matched (typo and prefix
 * matches included), and a short excerpt around the best of them with its own ranges.
 */
import type { Analyzer, Word } from "./analyzer.ts";

/** A stretch of a text in UTF-16 code units: `text.slice(start, end)`. */
export interface TextRange {
  start: number;
  end: number;
}

/** An excerpt of a text, and the ranges of the matched words in it. */
export interface Snippet {
  text: string;
  highlights: TextRange[];
}

/** Words in a snippet. */
const SNIPPET_WORDS = 20;
const ELLIPSIS = "…";

/** The ranges of the words (of {@link textWords}) whose terms are in `terms`, in order. */
export function highlightRanges(words: Word[], terms: ReadonlySet<string>): TextRange[] {
  return words.filter((word) => terms.has(word.term)).map(({ start, end }) => ({ start, end }));
}

/**
 * About {@link SNIPPET_WORDS} words of `text` (its {@link textWords}) around its best matches: the stretch with the most distinct matched
 * terms (then the most matches), centred on them, with `…` where the text was cut; the start of the text when nothing
 * matched.
 */
export function snippetOf(text: string, words: Word[], terms: ReadonlySet<string>): Snippet {
  if (words.length <= SNIPPET_WORDS) return { text, highlights: highlightRanges(words, terms) };
  const first = bestWindow(words, terms);
  const [from, to] = [first, first + SNIPPET_WORDS];
  const cutStart = from > 0;
  const cutEnd = to < words.length;
  const base = cutStart ? words[from]!.start : 0;
  const end = cutEnd ? words[to - 1]!.end : text.length;
  const shift = (cutStart ? ELLIPSIS.length : 0) - base;
  const highlights = words.slice(from, to).filter((word) => terms.has(word.term))
    .map(({ start, end }) => ({ start: start + shift, end: end + shift }));
  return {
    text: `${cutStart ? ELLIPSIS : ""}${text.slice(base, end)}${cutEnd ? ELLIPSIS : ""}`,
    highlights,
  };
}

/** The first word of the window of {@link SNIPPET_WORDS} words with the best matches, centred on them. */
function bestWindow(words: Word[], terms: ReadonlySet<string>): number {
  const inWindow = new Map<string, number>();
  let matches = 0;
  let best = { first: 0, score: -1 };
  const add = (word: Word, delta: number) => {
    if (!terms.has(word.term)) return;
    const count = (inWindow.get(word.term) ?? 0) + delta;
    if (count === 0) inWindow.delete(word.term);
    else inWindow.set(word.term, count);
    matches += delta;
  };
  for (let i = 0; i < words.length; i++) {
    add(words[i]!, 1);
    if (i >= SNIPPET_WORDS) add(words[i - SNIPPET_WORDS]!, -1);
    const first = Math.max(0, i - SNIPPET_WORDS + 1);
    const score = inWindow.size * words.length + matches;
    if (i >= SNIPPET_WORDS - 1 && score > best.score) best = { first, score };
  }
  const matched: number[] = [];
  for (let i = best.first; i < best.first + SNIPPET_WORDS; i++) if (terms.has(words[i]!.term)) matched.push(i);
  if (matched.length === 0) return 0;
  const centre = Math.round((matched[0]! + matched.at(-1)!) / 2);
  return Math.min(Math.max(0, centre - SNIPPET_WORDS / 2), words.length - SNIPPET_WORDS);
}

/** The words of a text, one per stretch: a word that folds into several terms keeps the first. */
export function textWords(text: string, analyzer: Analyzer): Word[] {
  const words: Word[] = [];
  for (const word of analyzer.words(text)) if (words.at(-1)?.start !== word.start) words.push(word);
  return words;
}
