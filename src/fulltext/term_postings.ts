/**
 * Per term, the slots (documents) that hold it. A term held by one slot is that slot's number in the map rather than
 * a list: most terms of a vocabulary of names, codes and rare words are held once, and a list of its own (an object,
 * an array and the array's spare room) cost such a term about 110 bytes more than the number.
 */
import { TermHolders } from "./term_holders.ts";

/** The slots that hold each term. */
export class TermPostings {
  readonly #holders = new Map<string, number | TermHolders>();
  /** Terms whose holders are a list. */
  #lists = 0;

  /** How many terms some slot holds. */
  get terms(): number {
    return this.#holders.size;
  }

  /** How many terms are held by more than one slot, each with a list. */
  get lists(): number {
    return this.#lists;
  }

  /** Every term some slot holds. */
  keys(): IterableIterator<string> {
    return this.#holders.keys();
  }

  /** Adds `slot` to the holders of `term`, which it does not hold; true when no slot held `term` before. */
  add(term: string, slot: number): boolean {
    const holders = this.#holders.get(term);
    if (holders === undefined) {
      this.#holders.set(term, slot);
      return true;
    }
    if (typeof holders === "number") {
      this.#holders.set(term, new TermHolders([holders, slot]));
      this.#lists++;
    } else {
      holders.add(slot);
    }
    return false;
  }

  /** Sets the holders of a term that no slot holds yet, as a snapshot lists them (distinct, at least one). */
  set(term: string, slots: ArrayLike<number>): void {
    if (slots.length === 1) {
      this.#holders.set(term, slots[0]!);
      return;
    }
    // Of its exact length, filled by a plain loop: building from a typed array's iterator was the slowest part of a
    // snapshot load.
    const list = new Array<number>(slots.length);
    for (let i = 0; i < slots.length; i++) list[i] = slots[i]!;
    this.#holders.set(term, new TermHolders(list));
    this.#lists++;
  }

  /** Removes `slot` from the holders of `term`: how many hold it after, or -1 if no slot held it. */
  delete(term: string, slot: number): number {
    const holders = this.#holders.get(term);
    if (holders === undefined) return -1;
    if (typeof holders === "number") {
      this.#holders.delete(term);
      return 0;
    }
    holders.delete(slot);
    if (holders.size > 1) return holders.size;
    // Down to one holder: the number again, so that memory follows what is held, not what was.
    this.#holders.set(term, holders.slots()[0]!);
    this.#lists--;
    return 1;
  }

  /** How many slots hold `term`. */
  count(term: string): number {
    const holders = this.#holders.get(term);
    return holders === undefined ? 0 : typeof holders === "number" ? 1 : holders.size;
  }

  /** The slots that hold `term`, in no particular order, valid until the next change; undefined if none does. */
  slots(term: string): readonly number[] | undefined {
    const holders = this.#holders.get(term);
    if (holders === undefined) return undefined;
    return typeof holders === "number" ? [holders] : holders.slots();
  }
}
