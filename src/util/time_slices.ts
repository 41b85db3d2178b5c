/** Long synchronous work split into short slices, so that the event loop answers requests in between. */

/** Resolves on a later turn of the event loop, once timers and I/O that are due have run. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** Where long work checks {@link due} between its steps, and awaits {@link next} when it is. */
export interface Slices {
  /** Whether the current slice is over. */
  readonly due: boolean;
  /** Lets other work run, then starts a new slice. */
  next(): Promise<void>;
}

/** Slices of about `ms` each, after which the event loop gets a turn. */
export class TimeSlices implements Slices {
  readonly #ms: number;
  #start = performance.now();

  constructor(ms: number) {
    this.#ms = ms;
  }

  /** Whether the current slice has used its time. */
  get due(): boolean {
    return performance.now() - this.#start >= this.#ms;
  }

  /** Lets the event loop run, then starts a new slice. */
  async next(): Promise<void> {
    await nextTurn();
    this.#start = performance.now();
  }
}
