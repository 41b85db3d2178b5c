/** Work that runs after a response, tracked so that shutdown and tests can wait for it. */

/** A set of running background tasks; failures are logged, never thrown. */
export class BackgroundTasks {
  readonly #running = new Set<Promise<void>>();

  /** Starts `task` in the background. */
  run(name: string, task: () => Promise<unknown>): void {
    const promise = task().then(
      () => {},
      (error) => console.error(`Background task "${name}" failed:`, error),
    ).finally(() => this.#running.delete(promise));
    this.#running.add(promise);
  }

  /** Tracks work that someone else awaits (and handles the failure of) until it settles; returns it unchanged. */
  watch<T>(work: Promise<T>): Promise<T> {
    // Only to learn when it settles: the caller, who gets `work` back, hears of its failure.
    const settled = work.then(() => {}, () => {}).finally(() => this.#running.delete(settled));
    this.#running.add(settled);
    return work;
  }

  /** Resolves once no task is running, including tasks started while waiting. */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.all(this.#running);
  }
}
