/** Serialises async work per key within this process. */

/** Runs at most one task per key at a time, in arrival order. */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<void>>();

  /** Runs `task` once every earlier task of `key` has settled. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = new Promise<void>((resolve) => release = resolve);
    this.#tails.set(key, tail);
    await previous;
    try {
      return await task();
    } finally {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}
