/**
 * Finding words in a {@link SortedWords} without looking at every one: the words within a few typos of a query word,
 * and the words that start with a prefix.
 *
 * The typo walk is a Levenshtein automaton run over the sorted words: one row of edit distances per character, as in
 * a walk over a trie. A typo on the first letter counts as two, as in Meilisearch: people rarely miss the first letter,
 * and the rule lets one typo rule out every word of another first letter at once. A word reuses the rows of the prefix it shares with the word before it, and once every entry of
 * a row exceeds the typos allowed, every word under that prefix is skipped with one binary search.
 */
import type { SortedWords } from "./sorted_words.ts";

/** A word of the set and how many edits (insertions, deletions, substitutions, swaps of neighbours) away it is. */
export interface NearWord {
  word: string;
  edits: number;
}

/** The words of `words` at most `maxEdits` edits from `query`, counted in UTF-16 code units. */
export function wordsWithin(words: SortedWords, query: string, maxEdits: number): NearWord[] {
  const found: NearWord[] = [];
  const width = query.length + 1;
  // rows[k] is the row of edit distances once a word's first k characters are read; rows[0] is 0, 1, 2, ….
  // A typo on the first letter counts as two (as Meilisearch counts it): skipping the query's first letter costs 2.
  const rows: Int32Array[] = [Int32Array.from({ length: width }, (_, j) => j === 0 ? 0 : j + 1)];
  let previous = "";
  /** How many of `previous`'s rows are computed. */
  let computed = 0;
  const cursor = words.lowerBound("");
  for (let word = words.wordAt(cursor); word !== undefined; word = words.wordAt(cursor)) {
    let depth = 0;
    const shared = Math.min(computed, word.length);
    while (depth < shared && word.charCodeAt(depth) === previous.charCodeAt(depth)) depth++;
    let dead = 0;
    for (let k = depth + 1; k <= word.length; k++) {
      const row = (rows[k] ??= new Int32Array(width));
      if (nextRow(query, row, rows[k - 1]!, k > 1 ? rows[k - 2] : undefined, word, k) > maxEdits) {
        dead = k;
        break;
      }
    }
    previous = word;
    if (dead > 0) {
      // No word that starts with these `dead` characters can come within the typos allowed.
      computed = dead;
      words.skipPrefix(cursor, word, dead);
      continue;
    }
    computed = word.length;
    const edits = rows[word.length]![query.length]!;
    if (edits <= maxEdits) found.push({ word, edits });
    words.advance(cursor);
  }
  return found;
}

/**
 * Fills `row`, the edit distances once `word`'s first `k` characters are read, from the row before it (`above`) and
 * the one before that (`twoAbove`, for swaps of neighbours: "teh" → "the" is one edit). Returns the row's least entry.
 */
function nextRow(
  query: string,
  row: Int32Array,
  above: Int32Array,
  twoAbove: Int32Array | undefined,
  word: string,
  k: number,
): number {
  const char = word.charCodeAt(k - 1);
  const last = k > 1 ? word.charCodeAt(k - 2) : -1;
  // Letters before the query's first: a typo on the first letter, which counts as two.
  row[0] = k + 1;
  let least = row[0];
  for (let j = 1; j < row.length; j++) {
    const queryChar = query.charCodeAt(j - 1);
    const first = j === 1 && k === 1 ? 2 : 1;
    let edits = Math.min(above[j]! + 1, row[j - 1]! + 1, above[j - 1]! + (queryChar === char ? 0 : first));
    if (twoAbove !== undefined && j > 1 && queryChar === last && query.charCodeAt(j - 2) === char) {
      edits = Math.min(edits, twoAbove[j - 2]! + (j === 2 ? 2 : 1));
    }
    row[j] = edits;
    if (edits < least) least = edits;
  }
  return least;
}

/** Up to `limit` words of `words` that start with `prefix` (and are longer than it), in order. */
export function wordsWithPrefix(words: SortedWords, prefix: string, limit: number): string[] {
  const found: string[] = [];
  const cursor = words.lowerBound(prefix);
  for (let word = words.wordAt(cursor); word?.startsWith(prefix) && found.length < limit; word = words.wordAt(cursor)) {
    if (word.length > prefix.length) found.push(word);
    words.advance(cursor);
  }
  return found;
}
