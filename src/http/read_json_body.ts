/** Reads a request body as a JSON object, never buffering more than the limit. */
import { ApiError } from "../api/api_error.ts";
import { concatBytes } from "../util/concat_bytes.ts";

const decoder = new TextDecoder("utf-8", { fatal: true });

/** How a body is read. */
export interface BodyLimits {
  maxBytes: number;
  /** The body must arrive within this time, so that a slow client cannot hold a request open. */
  timeoutMs: number;
  /** The service's watch over body deadlines. */
  deadlines: BodyDeadlines;
}

/**
 * Reads and parses the body: 413 past `maxBytes`, 408 when it takes longer than `timeoutMs`, 400 for a body cut short
 * or malformed, bad UTF-8, bad JSON, or JSON that is not an object.
 */
export async function readJsonObject(request: Request, limits: BodyLimits): Promise<Record<string, unknown>> {
  const { maxBytes } = limits;
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) throw tooLarge(maxBytes);
  let chunks: Uint8Array[];
  try {
    chunks = await readBody(request, declared, limits);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    // The connection ended before the body did, or the body broke HTTP's framing.
    throw new ApiError(400, "Request body could not be read: it ended early or was malformed", { cause: error });
  }
  let text: string;
  try {
    text = decoder.decode(chunks.length === 1 ? chunks[0] : concatBytes(chunks));
  } catch {
    throw new ApiError(400, "Request body is not valid UTF-8");
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ApiError(400, `Request body is not valid JSON: ${(error as SyntaxError).message}`);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new ApiError(400, "Request body must be a JSON object");
  }
  return json as Record<string, unknown>;
}

/** The body's bytes: whole when its length is declared, else chunk by chunk up to the limit. */
async function readBody(request: Request, declared: number, limits: BodyLimits): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const deadline = Date.now() + limits.timeoutMs;
  if (declared <= limits.maxBytes) {
    // The server holds a body to its declared length, so it can be read whole.
    chunks.push(new Uint8Array(await limits.deadlines.race(request.arrayBuffer(), deadline)));
  } else if (request.body !== null) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await readBefore(reader, deadline, limits.deadlines);
      if (done) break;
      total += value.byteLength;
      if (total > limits.maxBytes) {
        await reader.cancel();
        throw tooLarge(limits.maxBytes);
      }
      chunks.push(value);
    }
  }
  return chunks;
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError(413, `Request body is larger than the limit of ${maxBytes} bytes`);
}

/** One read of the body, or 408 (and the body cancelled) once the deadline has passed. */
async function readBefore(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  deadline: number,
  deadlines: BodyDeadlines,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  try {
    return await deadlines.race(reader.read(), deadline);
  } catch (error) {
    // Only to release the body: a stream that already broke may refuse to cancel; the error rethrown is what counts.
    await reader.cancel().catch(() => {});
    throw error;
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
      return Promise.reject(new ApiError(408, "Request body took too long to arrive"));
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
      waiter.reject(new ApiError(408, "Request body took too long to arrive"));
    }
    this.stop();
  }
}

/** How often overdue body reads are looked for; a timeout fires up to this much late. */
const WATCHDOG_INTERVAL_MS = 100;
