/** Orders scored documents: score descending, ties broken by id, and cuts one page without sorting everything. */

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

/** A page of a ranking: `limit` places from `offset` on. */
export interface Page {
  offset: number;
  limit: number;
}

/**
 * Returns the positions (indexes into `scores`) at ranks `offset` to `offset + limit - 1`, best first: score
 * descending, ties broken by id.
 */
export function rankPage(scores: ArrayLike<number>, idOf: (position: number) => string, page: Page): number[] {
  const wanted = page.offset + page.limit;
  if (scores.length <= SELECT_FIRST * wanted) return rankPageAmong(scores, idOf, page);
  // Only the best `wanted` can be on the page: found by selection, then ordered.
  const positions = bestPositions(scores, idOf, wanted);
  const kept = positions.map((position) => scores[position]!);
  return rankPageAmong(kept, (i) => idOf(positions[i]!), page).map((i) => positions[i]!);
}

/**
 * The positions of the `count` best of `scores`, in no order: those above the `count`th best score, and as many of
 * those tied with it as fit, the least ids first. The same set as the first `count` of {@link rankPage}'s order, without
 * ordering it: only the ties at the cut compare ids.
 */
export function bestPositions(scores: ArrayLike<number>, idOf: (position: number) => string, count: number): number[] {
  if (scores.length <= count) return Array.from({ length: scores.length }, (_, position) => position);
  if (count <= 0) return [];
  const least = kthLargest(scores, count);
  const best: number[] = [];
  const tied: number[] = [];
  for (let position = 0; position < scores.length; position++) {
    if (scores[position]! > least) best.push(position);
    else if (scores[position] === least) tied.push(position);
  }
  // Thousands may tie (one common word, documents of one length): a heap keeps the least ids without sorting them all.
  const kept = rankPageBy(tied.length, (a, b) => compareCodePoints(idOf(tied[a]!), idOf(tied[b]!)) < 0, {
    offset: 0,
    limit: count - best.length,
  });
  for (const i of kept) best.push(tied[i]!);
  return best;
}

/**
 * Past this many scores per place wanted, the places' least score is found first by selection, and the heap orders only
 * what reaches it: the heap's comparisons of tied scores by id cost the most when every score passes through it.
 */
const SELECT_FIRST = 4;

function rankPageAmong(scores: ArrayLike<number>, idOf: (position: number) => string, page: Page): number[] {
  return rankPageBy(scores.length, (a, b) => {
    const diff = scores[a]! - scores[b]!;
    return diff !== 0 ? diff > 0 : compareCodePoints(idOf(a), idOf(b)) < 0;
  }, page);
}

/** Room for {@link kthLargest}'s copies, kept between calls: a search selects among every match's score. */
let selection = new Float64Array(0);

/**
 * Up to this share of the values, {@link kthLargest} keeps the `k` largest in a heap in one pass instead of copying
 * them all for quickselect, which copies every value even when a page of 10 is wanted among hundreds of thousands.
 */
const HEAP_SELECT_SHARE = 1 / 16;

/** The `k`th largest of `values` (1 ≤ k ≤ length). */
function kthLargest(values: ArrayLike<number>, k: number): number {
  return k <= values.length * HEAP_SELECT_SHARE ? kthLargestByHeap(values, k) : kthLargestBySelection(values, k);
}

/**
 * The `k`th largest of `values`: the least of a min-heap of the `k` largest so far, which few values enter. Its sifts
 * are written out on a typed array rather than calling {@link siftUp} and {@link siftDown} with a comparator, whose
 * calls made selecting hybrid's text candidates markedly slower.
 */
function kthLargestByHeap(values: ArrayLike<number>, k: number): number {
  if (selection.length < k) selection = new Float64Array(k);
  const heap = selection.subarray(0, k);
  for (let i = 0; i < k; i++) {
    // Sift up the new value of a heap of i + 1.
    let at = i;
    const value = values[i]!;
    while (at > 0 && heap[(at - 1) >> 1]! > value) {
      heap[at] = heap[(at - 1) >> 1]!;
      at = (at - 1) >> 1;
    }
    heap[at] = value;
  }
  for (let i = k; i < values.length; i++) {
    const value = values[i]!;
    if (value <= heap[0]!) continue;
    // Replace the least and sift it down.
    let at = 0;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= k) break;
      const right = left + 1;
      const child = right < k && heap[right]! < heap[left]! ? right : left;
      if (heap[child]! >= value) break;
      heap[at] = heap[child]!;
      at = child;
    }
    heap[at] = value;
  }
  return heap[0]!;
}

/** The `k`th largest of `values`, by quickselect on a copy. */
function kthLargestBySelection(values: ArrayLike<number>, k: number): number {
  if (selection.length < values.length) selection = new Float64Array(values.length);
  const copy = selection.subarray(0, values.length);
  copy.set(values);
  // The kth largest is at `target` once the copy is in ascending order.
  const target = copy.length - k;
  let left = 0;
  let right = copy.length - 1;
  while (left < right) {
    const pivot = copy[(left + right) >> 1]!;
    let i = left;
    let j = right;
    while (i <= j) {
      while (copy[i]! < pivot) i++;
      while (copy[j]! > pivot) j--;
      if (i <= j) {
        const swap = copy[i]!;
        copy[i++] = copy[j]!;
        copy[j--] = swap;
      }
    }
    if (target <= j) right = j;
    else if (target >= i) left = i;
    else return copy[target]!;
  }
  return copy[target]!;
}

/**
 * Returns the positions `0..count-1` at ranks `offset` to `offset + limit - 1` of the order `before`. Keeps a heap of
 * the best `offset + limit`, so a page costs O(n log k) rather than a full sort.
 */
export function rankPageBy(count: number, before: Before, page: Page): number[] {
  const wanted = Math.min(page.offset + page.limit, count);
  if (wanted <= page.offset) return [];
  // A heap whose root is the worst of the best `wanted` seen so far.
  const heap: number[] = [];
  for (let position = 0; position < count; position++) {
    if (heap.length < wanted) {
      heap.push(position);
      siftUp(heap, heap.length - 1, before);
    } else if (before(position, heap[0]!)) {
      heap[0] = position;
      siftDown(heap, 0, before);
    }
  }
  heap.sort((a, b) => before(a, b) ? -1 : 1);
  return heap.slice(page.offset);
}

/** `before(a, b)`: position a ranks before position b. */
export type Before = (a: number, b: number) => boolean;

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
