/** The best-scoring slots of a stream, kept in a bounded heap: most offers cost one comparison with the worst kept. */

/** Collects the `count` highest-scoring slots offered to it. */
export class BestSlots {
  readonly #count: number;
  readonly #scores: Float64Array;
  readonly #slots: Int32Array;
  #size = 0;

  constructor(count: number) {
    this.#count = count;
    this.#scores = new Float64Array(count);
    this.#slots = new Int32Array(count);
  }

  /** Keeps `slot` if its score is among the best offered so far. */
  offer(slot: number, score: number): void {
    if (this.#count === 0) return;
    if (this.#size < this.#count) {
      this.#place(this.#size++, slot, score);
      return;
    }
    if (score <= this.#scores[0]!) return;
    this.#sink(slot, score);
  }

  /**
   * The slots kept, best first; it empties the heap. Pops the least at a time into the result's end: the heap is
   * ordered already, and a comparator sort of the kept slots was a noticeable cost on every hybrid search.
   */
  sorted(): number[] {
    const result = new Array<number>(this.#size);
    while (this.#size > 0) {
      result[--this.#size] = this.#slots[0]!;
      if (this.#size > 0) this.#sink(this.#slots[this.#size]!, this.#scores[this.#size]!);
    }
    return result;
  }

  /** Adds at the end of a heap whose root is its least score, and sifts up. */
  #place(at: number, slot: number, score: number): void {
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (this.#scores[parent]! <= score) break;
      this.#scores[at] = this.#scores[parent]!;
      this.#slots[at] = this.#slots[parent]!;
      at = parent;
    }
    this.#scores[at] = score;
    this.#slots[at] = slot;
  }

  /** Puts a slot in the root's place (a better offer, or the last when popping), and sifts it down. */
  #sink(slot: number, score: number): void {
    let at = 0;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= this.#size) break;
      const right = left + 1;
      const child = right < this.#size && this.#scores[right]! < this.#scores[left]! ? right : left;
      if (this.#scores[child]! >= score) break;
      this.#scores[at] = this.#scores[child]!;
      this.#slots[at] = this.#slots[child]!;
      at = child;
    }
    this.#scores[at] = score;
    this.#slots[at] = slot;
  }
}
