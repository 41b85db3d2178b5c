/** Orders scored documents: score descending, ties broken by id, and cuts one page without sorting everything. */

/** One ranked document. */
export interface ScoredDoc {
  id: string;
  score: number;
}

/**
 * Compares strings by Unicode code point, the order of Deno KV keys (and of `listIndexes` and `getDocs`). Plain `<`
 * compares UTF-16 code units, which puts characters above U+FFFF before U+E000–U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

function codePointRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  return unit >= 0xe000 ? unit - 0x800 : unit;
}

/**
 * Returns the documents at ranks `offset` to `offset + limit - 1`. Keeps a heap of the best `offset + limit`, so a
 * page costs O(n log k) rather than a full sort.
 */
export function rankPage(
  ids: readonly string[],
  scores: ArrayLike<number>,
  offset: number,
  limit: number,
): ScoredDoc[] {
  const wanted = Math.min(offset + limit, ids.length);
  if (wanted <= offset) return [];
  // `before(a, b)`: document a ranks before document b.
  const before = (a: number, b: number) => {
    const diff = scores[a]! - scores[b]!;
    return diff !== 0 ? diff > 0 : compareCodePoints(ids[a]!, ids[b]!) < 0;
  };
  // A heap whose root is the worst of the best `wanted` seen so far.
  const heap: number[] = [];
  for (let doc = 0; doc < ids.length; doc++) {
    if (heap.length < wanted) {
      heap.push(doc);
      siftUp(heap, heap.length - 1, before);
    } else if (before(doc, heap[0]!)) {
      heap[0] = doc;
      siftDown(heap, 0, before);
    }
  }
  heap.sort((a, b) => before(a, b) ? -1 : 1);
  return heap.slice(offset).map((doc) => ({ id: ids[doc]!, score: scores[doc]! }));
}

type Before = (a: number, b: number) => boolean;

function siftUp(heap: number[], at: number, before: Before): void {
  while (at > 0) {
    const parent = (at - 1) >> 1;
    if (!before(heap[parent]!, heap[at]!)) return;
    [heap[parent], heap[at]] = [heap[at]!, heap[parent]!];
    at = parent;
  }
}

function siftDown(heap: number[], at: number, before: Before): void {
  for (;;) {
    const left = 2 * at + 1;
    const right = left + 1;
    let worst = at;
    if (left < heap.length && before(heap[worst]!, heap[left]!)) worst = left;
    if (right < heap.length && before(heap[worst]!, heap[right]!)) worst = right;
    if (worst === at) return;
    [heap[worst], heap[at]] = [heap[at]!, heap[worst]!];
    at = worst;
  }
}
