/**
 * Reads a request body chunk by chunk within its deadlines, so that a slow client cannot hold a request open: no chunk
 * may keep the server waiting longer than the idle timeout, nor the whole body longer than the body timeout plus a
 * second for every {@link BYTES_PER_EXTRA_SECOND} that have arrived. Only the time spent waiting for the client counts,
 * never the time the server takes with what it read (an import embeds as it reads).
 */
import { ApiError } from "../api/api_error.ts";

/** How long a body may keep the server waiting. */
export interface BodyTimeouts {
  /** The longest wait for the whole body, before the allowance of its size. */
  timeoutMs: number;
  /** The longest wait for any one chunk. */
  idleTimeoutMs: number;
  /** The service's watch over body deadlines. */
  deadlines: BodyDeadlines;
}

/**
 * A large body earns a second of waiting for each this many bytes it has sent, as a minimum rate (Apache's
 * `mod_reqtimeout` `MinRate`): a body that keeps arriving at this rate is never cut off, and one that trickles is.
 */
const BYTES_PER_EXTRA_SECOND = 64 * 1024;

/** The chunks of `body` as they arrive; 408, with the body cancelled, once it keeps the server waiting too long. */
export async function* bodyChunks(
  body: ReadableStream<Uint8Array>,
  timeouts: BodyTimeouts,
): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  let waitedMs = 0;
  let received = 0;
  let done = false;
  try {
    for (;;) {
      const allowedMs = timeouts.timeoutMs + 1000 * received / BYTES_PER_EXTRA_SECOND - waitedMs;
      const start = Date.now();
      const deadline = start + Math.min(allowedMs, timeouts.idleTimeoutMs);
      const read = await timeouts.deadlines.race(reader.read(), deadline);
      waitedMs += Date.now() - start;
      if (read.done) {
        done = true;
        return;
      }
      received += read.value.byteLength;
      yield read.value;
    }
  } finally {
    // Only to release the body: a stream that already broke may refuse to cancel; the error thrown is what counts.
    if (!done) await reader.cancel().catch(() => {});
  }
}

/**
 * Body reads waiting for their deadline, per service. One timer checks them, instead of a timer per read; it stops only
 * at a check that finds nothing waiting, since starting and stopping it with every request cost small requests a
 * noticeable share of their throughput.
 */
export class BodyDeadlines {
  readonly #waiting = new Set<{ deadline: number; reject: (error: ApiError) => void }>();
  #watchdog: ReturnType<typeof setInterval> | undefined;

  /** `work`, or 408 once the deadline has passed. */
  race<T>(work: Promise<T>, deadline: number): Promise<T> {
    if (Date.now() >= deadline) {
      // Abandoned for the 408 below: the caller then cancels the body, which may reject this read; nothing awaits it.
      work.catch(() => {});
      return Promise.reject(tooSlow());
    }
    const { promise, resolve, reject } = Promise.withResolvers<T>();
    const waiter = { deadline, reject };
    this.#waiting.add(waiter);
    this.#watchdog ??= setInterval(() => this.#rejectOverdue(), WATCHDOG_INTERVAL_MS);
    work.then((value) => {
      this.#waiting.delete(waiter);
      resolve(value);
    }, (error) => {
      this.#waiting.delete(waiter);
      reject(error);
    });
    return promise;
  }

  /** Stops the timer unless a body is being read; a service calls it at shutdown. */
  stop(): void {
    if (this.#waiting.size > 0) return;
    clearInterval(this.#watchdog);
    this.#watchdog = undefined;
  }

  #rejectOverdue(): void {
    const now = Date.now();
    for (const waiter of this.#waiting) {
      if (waiter.deadline > now) continue;
      this.#waiting.delete(waiter);
      waiter.reject(tooSlow());
    }
    this.stop();
  }
}

function tooSlow(): ApiError {
  return new ApiError(408, "Request body took too long to arrive");
}

/** How often overdue body reads are looked for; a timeout fires up to this much late. */
const WATCHDOG_INTERVAL_MS = 100;
