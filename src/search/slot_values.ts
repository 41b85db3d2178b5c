/**
 * A number per slot for the length of one search, in a dense array that searches reuse: looking one up costs an array
 * read where a `Map` of 30,000 entries cost a hash lookup, and nothing is allocated per search. Whoever fills it clears
 * it (in a `finally`), which resets only the slots it set.
 */
export class SlotValues {
  #values = new Float64Array(0);
  readonly #set: number[] = [];

  /** Sets the value of `slot`. */
  set(slot: number, value: number): void {
    if (slot >= this.#values.length) this.#grow(slot + 1);
    if (Number.isNaN(this.#values[slot])) this.#set.push(slot);
    this.#values[slot] = value;
  }

  /** Whether `slot` has a value. */
  has(slot: number): boolean {
    return slot < this.#values.length && !Number.isNaN(this.#values[slot]);
  }

  /** The value of `slot`, or `fallback` when it has none. */
  get(slot: number, fallback = 0): number {
    const value = this.#values[slot];
    return value === undefined || Number.isNaN(value) ? fallback : value;
  }

  /** Forgets every value set. */
  clear(): void {
    for (const slot of this.#set) this.#values[slot] = NaN;
    this.#set.length = 0;
  }

  #grow(length: number): void {
    const grown = new Float64Array(Math.max(length, 2 * this.#values.length)).fill(NaN);
    grown.set(this.#values);
    this.#values = grown;
  }
}
