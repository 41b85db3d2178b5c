/**
 * A set of words kept in sorted order, in blocks of a few hundred: about 30 bytes a word (the string and its place in
 * a block), where a node of Orama's radix tree, with a map and a set of its own, cost 500-900. Sorted order is what
 * the walks need (see `word_walks.ts`): words that share a prefix lie together, so that a walk reuses its work on the
 * shared part and skips every word under a prefix it has ruled out with one binary search. Blocks keep an insert or a
 * removal to a short move, however many words the set holds.
 */

/** A block splits in two beyond this many words. */
const BLOCK_MAX = 512;
/** Blocks built at once (from a snapshot's words) are filled to this many words, with room for inserts. */
const BLOCK_FILL = 384;

/** A place in the set: a block and a word in it. At the end, `block` is the number of blocks. */
export interface WordCursor {
  block: number;
  at: number;
}

/** A sorted set of distinct strings. */
export class SortedWords {
  /** Non-empty, sorted blocks; every word of a block sorts before every word of the next. */
  #blocks: string[][] = [];
  #size = 0;

  /**
   * A set of `words`, which may repeat and come in any order; words in order and distinct already (a snapshot's) are
   * taken as they come, where sorting 100,000 words took about 20 ms of a load.
   */
  static from(words: Iterable<string>): SortedWords {
    let sorted = [...words];
    if (!inOrder(sorted)) sorted = [...new Set(sorted)].sort(compare);
    const set = new SortedWords();
    for (let from = 0; from < sorted.length; from += BLOCK_FILL) {
      set.#blocks.push(sorted.slice(from, from + BLOCK_FILL));
    }
    set.#size = sorted.length;
    return set;
  }

  /** How many words it holds. */
  get size(): number {
    return this.#size;
  }

  /** Adds `word`; false if it was there already. */
  add(word: string): boolean {
    if (this.#blocks.length === 0) {
      this.#blocks.push([word]);
      this.#size = 1;
      return true;
    }
    let { block, at } = this.lowerBound(word);
    // Past the last word: it joins the last block.
    if (block === this.#blocks.length) [block, at] = [block - 1, this.#blocks[block - 1]!.length];
    const words = this.#blocks[block]!;
    if (words[at] === word) return false;
    words.splice(at, 0, word);
    this.#size++;
    if (words.length > BLOCK_MAX) this.#blocks.splice(block + 1, 0, words.splice(words.length >> 1));
    return true;
  }

  /** Removes `word`; false if it was not there. */
  delete(word: string): boolean {
    const { block, at } = this.lowerBound(word);
    const words = this.#blocks[block];
    if (words?.[at] !== word) return false;
    words.splice(at, 1);
    this.#size--;
    if (words.length === 0) this.#blocks.splice(block, 1);
    return true;
  }

  /** Every word, in order. */
  words(): string[] {
    return this.#blocks.flat();
  }

  /** The place of the first word that sorts at or after `word`. */
  lowerBound(word: string): WordCursor {
    const blocks = this.#blocks;
    // The first block whose last word is not before `word`.
    let low = 0;
    let high = blocks.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      const words = blocks[middle]!;
      if (words[words.length - 1]! < word) low = middle + 1;
      else high = middle;
    }
    if (low === blocks.length) return { block: low, at: 0 };
    const words = blocks[low]!;
    let start = 0;
    let end = words.length;
    while (start < end) {
      const middle = (start + end) >> 1;
      if (words[middle]! < word) start = middle + 1;
      else end = middle;
    }
    return { block: low, at: start };
  }

  /** The word at `cursor`, or undefined at the end. */
  wordAt(cursor: WordCursor): string | undefined {
    return this.#blocks[cursor.block]?.[cursor.at];
  }

  /**
   * Moves `cursor` past the words that start with the first `length` characters of `word`, from where it is: a gallop
   * forward, since the words it skips are often few.
   */
  skipPrefix(cursor: WordCursor, word: string, length: number): void {
    const blocks = this.#blocks;
    while (cursor.block < blocks.length) {
      const words = blocks[cursor.block]!;
      if (startsWith(words[words.length - 1]!, word, length)) {
        cursor.block++;
        cursor.at = 0;
        continue;
      }
      if (!startsWith(words[cursor.at]!, word, length)) return;
      // words[cursor.at] starts so and the block's last word does not: find the first that does not.
      let low = cursor.at;
      let step = 1;
      while (low + step < words.length - 1 && startsWith(words[low + step]!, word, length)) {
        low += step;
        step *= 2;
      }
      let high = Math.min(low + step, words.length - 1);
      while (low + 1 < high) {
        const middle = (low + high) >> 1;
        if (startsWith(words[middle]!, word, length)) low = middle;
        else high = middle;
      }
      cursor.at = high;
      return;
    }
  }

  /** Moves `cursor` to the next word. */
  advance(cursor: WordCursor): void {
    if (++cursor.at >= (this.#blocks[cursor.block]?.length ?? 0)) {
      cursor.block++;
      cursor.at = 0;
    }
  }
}

/** Code-unit order, as `<` compares strings. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Whether each word sorts after the one before it: sorted, and no word twice. */
function inOrder(words: readonly string[]): boolean {
  for (let i = 1; i < words.length; i++) if (!(words[i - 1]! < words[i]!)) return false;
  return true;
}

/** Whether `word` starts with the first `length` characters of `other`, without making that prefix. */
function startsWith(word: string, other: string, length: number): boolean {
  if (word.length < length) return false;
  for (let i = 0; i < length; i++) if (word.charCodeAt(i) !== other.charCodeAt(i)) return false;
  return true;
}
