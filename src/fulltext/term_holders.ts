/**
 * The slots (documents) that hold one term, as a plain array of small integers: 8 bytes a slot and a tight loop to
 * read, against about 40 bytes and an iterator in a `Set`. A removal is noted apart and applied when the list is next
 * read, or once a quarter of the list waits, so that it never costs a pass over a long list of its own.
 *
 * A short list grows by copies of its exact length: `push` gives an array room for 16 more slots at once, 128 bytes
 * that most terms never fill.
 */

/** Lists shorter than this grow by an exact copy; longer ones by `push`, whose spare room is then a small share. */
const EXACT_GROWTH_BELOW = 32;

export class TermHolders {
  #slots: number[];
  /** Slots removed but still listed. */
  #removed: Set<number> | undefined;

  /** A list of `slots`, which must be distinct. */
  constructor(slots: number[] = []) {
    this.#slots = slots;
  }

  /** How many slots hold the term. */
  get size(): number {
    return this.#slots.length - (this.#removed?.size ?? 0);
  }

  /** Adds a slot that does not hold the term. */
  add(slot: number): void {
    // A slot removed and added again before the list was read is still listed.
    if (this.#removed?.delete(slot)) return;
    if (this.#slots.length < EXACT_GROWTH_BELOW) this.#slots = this.#slots.concat(slot);
    else this.#slots.push(slot);
  }

  /** Removes a slot that holds the term. */
  delete(slot: number): void {
    (this.#removed ??= new Set()).add(slot);
    if (this.#removed.size * 4 >= this.#slots.length) this.#applyRemovals();
  }

  /** The slots, in no particular order; valid until the next change. */
  slots(): readonly number[] {
    if (this.#removed !== undefined) this.#applyRemovals();
    return this.#slots;
  }

  #applyRemovals(): void {
    const removed = this.#removed!;
    this.#slots = this.#slots.filter((slot) => !removed.has(slot));
    this.#removed = undefined;
  }
}
