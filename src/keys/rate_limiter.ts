/**
 * Per-key rate limits, counted in the store in windows of a UTC minute so that every instance shares one count.
 *
 * A request far from its key's limit is admitted at once and counted in the store within {@link FLUSH_MS}, so that
 * most requests never wait for a write. Each instance admits at most {@link UNSYNCED_SHARE} of the limit so before the
 * store has counted it (a count under way included), and nothing past half of it: beyond that, requests wait for an
 * atomic count in the store, batched while one is in flight. N instances therefore admit at most N × 5% over the limit.
 */
import { ApiError } from "../api/api_error.ts";
import type { Metrics } from "../observability/metrics.ts";
import { countInWindow } from "../storage/rate_windows.ts";
import { whileBusy } from "../storage/store_busy.ts";

/** How long a request admitted without waiting may go uncounted in the store. */
const FLUSH_MS = 100;
/** The share of a key's limit that one instance admits without waiting for the store. */
const UNSYNCED_SHARE = 0.05;
/** Past this share of the limit, every request waits for the store's count. */
const FAST_SHARE = 0.5;
const WINDOW_MS = 60_000;

interface KeyWindow {
  window: number;
  limit: number;
  /** The window's count across instances at the last count in the store. */
  known: number;
  /** Admitted here since then, and not yet being counted. */
  unsynced: number;
  /** Admitted here, and being counted in the store now. */
  counting: number;
  /** Requests waiting for the store's count, each with its cost. */
  waiting: Waiter[];
  flushing: Promise<void> | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** A request waiting for the store's count: resolved with whether it was admitted. */
interface Waiter extends PromiseWithResolvers<boolean> {
  cost: number;
}

/** Admits requests of rate-limited keys, or refuses them with 429. */
export class RateLimiter {
  readonly #kv: Deno.Kv;
  readonly #metrics: Metrics;
  readonly #windows = new Map<string, KeyWindow>();

  constructor(kv: Deno.Kv, metrics: Metrics) {
    this.#kv = kv;
    this.#metrics = metrics;
  }

  /**
   * Resolves when key `keyId` may make a request of `cost` (a `multiSearch` costs one per query) this minute; 429 with
   * `Retry-After` when it may not.
   */
  async admit(keyId: string, limit: number, cost = 1): Promise<void> {
    const window = Math.floor(Date.now() / WINDOW_MS);
    let state = this.#windows.get(keyId);
    if (state === undefined || state.window !== window) {
      if (state !== undefined) this.#flushNow(keyId, state);
      state = { window, limit, known: 0, unsynced: 0, counting: 0, waiting: [], flushing: undefined, timer: undefined };
      this.#windows.set(keyId, state);
    }
    const uncounted = state.unsynced + state.counting;
    if (uncounted + cost <= limit * UNSYNCED_SHARE && state.known + uncounted + cost <= limit * FAST_SHARE) {
      state.unsynced += cost;
      state.timer ??= setTimeout(() => this.#flushNow(keyId, state), FLUSH_MS);
      return;
    }
    const waiter = { ...Promise.withResolvers<boolean>(), cost };
    state.waiting.push(waiter);
    this.#flushNow(keyId, state);
    if (await waiter.promise) return;
    this.#metrics.countRateLimited(keyId);
    const retryAfter = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - Date.now()) / 1000));
    throw new ApiError(
      429,
      `Key "${keyId}" passed its rate of ${limit} requests per minute${
        cost > 1 ? ` (this request counts as ${cost})` : ""
      }: retry in ${retryAfter} s`,
      {
        headers: { "retry-after": String(retryAfter) },
      },
    );
  }

  /** Counts what is still uncounted in the store, and stops the timers. */
  async close(): Promise<void> {
    for (const [keyId, state] of this.#windows) this.#flushNow(keyId, state);
    await Promise.all([...this.#windows.values()].map((state) => state.flushing));
    // A count that failed set a timer to try again, which would outlive the service.
    for (const state of this.#windows.values()) clearTimeout(state.timer);
  }

  /** Starts a count in the store unless one runs; one that runs counts again for what arrived meanwhile. */
  #flushNow(keyId: string, state: KeyWindow): void {
    clearTimeout(state.timer);
    state.timer = undefined;
    state.flushing ??= this.#flush(keyId, state).finally(() => state.flushing = undefined);
  }

  async #flush(keyId: string, state: KeyWindow): Promise<void> {
    while (state.unsynced > 0 || state.waiting.length > 0) {
      const counted = state.unsynced;
      const waiting = state.waiting.splice(0);
      state.unsynced = 0;
      state.counting = counted;
      try {
        const { total, admitted } = await whileBusy(() =>
          countInWindow(this.#kv, keyId, state.window, {
            counted,
            asking: waiting.map((waiter) => waiter.cost),
            limit: state.limit,
          })
        );
        state.known = total;
        waiting.forEach((waiter, i) => waiter.resolve(i < admitted));
      } catch (error) {
        // The store failed: the waiting requests fail with it, those that came meanwhile too (nothing else would answer
        // them), and the uncounted ones are counted at the next try.
        state.unsynced += counted;
        [...waiting, ...state.waiting.splice(0)].forEach((waiter) => waiter.reject(error));
        state.timer ??= setTimeout(() => this.#flushNow(keyId, state), FLUSH_MS);
        return;
      } finally {
        state.counting = 0;
      }
    }
  }
}
