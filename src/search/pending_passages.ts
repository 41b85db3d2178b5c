/**
 * The passage slots whose vectors wait to join a graph, oldest first: a queue, and a flag per slot for whether it waits.
 * A restored index of a million passages whose graph holds few of them (a scan plan's) filled a `Set` of them in about
 * 150 ms at every load, and held tens of MiB for it; this fills a queue and a byte a slot.
 */

/** Flag values of a slot: not waiting, waiting, and waiting but already taken by the pass under way. */
const NOT_WAITING = 0;
const WAITING = 1;
const TAKEN = 2;

/** Once this many queue entries are stale (taken or removed), and more than the waiting ones, the queue is rebuilt. */
const COMPACT_AFTER = 1_024;

export class PendingPassages {
  /** Slots in the order they came; entries whose slot no longer waits are stale, and skipped. */
  #queue: number[] = [];
  /** Where the queue's live part starts: the entries before it are all stale. */
  #head = 0;
  #flags = new Uint8Array(0);
  #size = 0;

  /** How many slots wait. */
  get size(): number {
    return this.#size;
  }

  /** Whether a slot waits. */
  has(slot: number): boolean {
    return this.#flags[slot] === WAITING;
  }

  /** Makes a slot wait, after those already waiting; nothing if it waits. */
  add(slot: number): void {
    if (this.has(slot)) return;
    if (slot >= this.#flags.length) {
      const grown = new Uint8Array(Math.max(slot + 1, this.#flags.length * 2, 1_024));
      grown.set(this.#flags);
      this.#flags = grown;
    }
    this.#flags[slot] = WAITING;
    this.#queue.push(slot);
    this.#size++;
  }

  /** Makes many slots wait, in order: as {@link add} each. */
  addAll(slots: Iterable<number>): void {
    for (const slot of slots) this.add(slot);
  }

  /** Stops a slot waiting; whether it waited. */
  delete(slot: number): boolean {
    if (!this.has(slot)) return false;
    this.#flags[slot] = NOT_WAITING;
    this.#size--;
    this.#compactIfStale();
    return true;
  }

  /** Up to `count` waiting slots (all, by default), oldest first, each once; they still wait. */
  oldest(count = Infinity): number[] {
    const found: number[] = [];
    // A slot removed and added again is in the queue twice: the first entry counts, the second is skipped.
    for (let at = this.#head; at < this.#queue.length && found.length < count; at++) {
      const slot = this.#queue[at]!;
      if (this.#flags[slot] !== WAITING) {
        if (at === this.#head && this.#flags[slot] === NOT_WAITING) this.#head++;
        continue;
      }
      this.#flags[slot] = TAKEN;
      found.push(slot);
    }
    for (const slot of found) this.#flags[slot] = WAITING;
    return found;
  }

  /** Rebuilds the queue from the slots that wait once most of it is stale, so that it never grows past its use. */
  #compactIfStale(): void {
    const stale = this.#queue.length - this.#size;
    if (stale < COMPACT_AFTER || stale < this.#size) return;
    this.#queue = this.oldest();
    this.#head = 0;
  }
}
