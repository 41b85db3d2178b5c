/**
 * Finding terms in Orama's radix tree without a scan over every term: the words within a few typos of a query word
 * (a Levenshtein automaton run over the tree, one row of edit distances per character, a branch dropped as soon as
 * every entry of its row exceeds the typos allowed), the words that start with a prefix, every word, and one word.
 */
import type { radix } from "@orama/orama/trees";

/** A word of the tree and how many edits (insertions, deletions, substitutions, swaps of neighbours) away it is. */
export interface NearWord {
  word: string;
  edits: number;
}

/** The words of the tree at most `maxEdits` edits from `word`, counted in UTF-16 code units. */
export function wordsWithin(root: radix.RadixNode, word: string, maxEdits: number): NearWord[] {
  const found: NearWord[] = [];
  const first = Array.from({ length: word.length + 1 }, (_, j) => j);
  const walk = (node: radix.RadixNode, row: number[], before: number[] | undefined, last: string) => {
    for (const child of node.c.values()) {
      let [previous, current, char] = [before, row, last];
      let alive = true;
      for (const next of child.s) {
        const computed = nextRow(word, current, previous, next, char);
        [previous, current, char] = [current, computed, next];
        if (Math.min(...computed) > maxEdits) {
          alive = false;
          break;
        }
      }
      if (!alive) continue;
      const edits = current[word.length]!;
      if (child.e && child.d.size > 0 && edits <= maxEdits) found.push({ word: child.w, edits });
      walk(child, current, previous, char);
    }
  };
  walk(root, first, undefined, "");
  return found;
}

/**
 * The next row of the edit-distance table once the tree's word has `char` appended. `before` is the row before `row`
 * and `last` the character that made `row`, for swaps of neighbours ("teh" → "the" is one edit).
 */
function nextRow(word: string, row: number[], before: number[] | undefined, char: string, last: string): number[] {
  const next = [row[0]! + 1];
  for (let j = 1; j <= word.length; j++) {
    const cost = word[j - 1] === char ? 0 : 1;
    let edits = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + cost);
    if (before !== undefined && j > 1 && word[j - 1] === last && word[j - 2] === char) {
      edits = Math.min(edits, before[j - 2]! + 1);
    }
    next.push(edits);
  }
  return next;
}

/** Up to `limit` words of the tree that start with `prefix` (and are longer than it), in tree order. */
export function wordsWithPrefix(root: radix.RadixNode, prefix: string, limit: number): string[] {
  const start = nodeAt(root, prefix);
  if (start === undefined) return [];
  const found: string[] = [];
  const stack = [start];
  while (stack.length > 0 && found.length < limit) {
    const node = stack.pop()!;
    if (node.e && node.d.size > 0 && node.w.length > prefix.length) found.push(node.w);
    for (const child of node.c.values()) stack.push(child);
  }
  return found;
}

/** The node where the words that start with `prefix` begin (its word may be longer than the prefix). */
function nodeAt(root: radix.RadixNode, prefix: string): radix.RadixNode | undefined {
  let node = root;
  let at = 0;
  while (at < prefix.length) {
    const child = node.c.get(prefix[at]!);
    if (child === undefined) return undefined;
    const rest = prefix.length - at;
    if (rest <= child.s.length) return child.s.startsWith(prefix.slice(at)) ? child : undefined;
    if (!prefix.startsWith(child.s, at)) return undefined;
    node = child;
    at += child.s.length;
  }
  return node;
}

/** Every word of a radix tree that ends at a node with a value: the words inserted and not removed. */
export function wordsOf(tree: radix.RadixNode): string[] {
  const words: string[] = [];
  const stack: radix.RadixNode[] = [tree];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.e && node.d.size > 0) words.push(node.w);
    stack.push(...node.c.values());
  }
  return words;
}

/** The node of a radix tree where exactly `word` ends, if any. */
export function exactNode(tree: radix.RadixNode, word: string): radix.RadixNode | undefined {
  let node: radix.RadixNode = tree;
  let at = 0;
  while (at < word.length) {
    const child = node.c.get(word[at]!);
    if (child === undefined || !word.startsWith(child.s, at)) return undefined;
    node = child;
    at += child.s.length;
  }
  return node.e ? node : undefined;
}
