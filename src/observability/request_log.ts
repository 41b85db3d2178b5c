/**
 * One JSON line per request on stdout, written in batches: a synchronous write per request (what `console.log` does on
 * a pipe) would cost the hot path more than the request itself, so lines are buffered and written asynchronously, one
 * write in flight at a time.
 */

const encoder = new TextEncoder();

/** Buffered lines are written at once when they pass this many characters… */
const FLUSH_CHARS = 32 * 1024;
/** …and otherwise this long after the first of them. */
const FLUSH_DELAY_MS = 50;
/** While a slow reader holds up the writes, at most this many characters wait; later lines are dropped and counted. */
const MAX_BUFFERED_CHARS = 4 * 1024 * 1024;
/** Longest project id and index name written; longer ones are cut (they are invalid anyway). */
const MAX_NAME_CHARS = 256;

/** Where the lines go: stdout, or any writer like it. */
export interface LogSink {
  write(bytes: Uint8Array): Promise<number>;
}

/** One answered request. Never the key, the body or a document text. */
export interface RequestLogEntry {
  requestId: string;
  /** The action, or `healthz`, `readyz`, `metrics`, `root`, `openapi.json`, `preflight`, `unknown`. */
  action: string;
  project?: string | undefined;
  index?: string | undefined;
  status: number;
  /** Milliseconds from the request's arrival to its response headers. */
  ms: number;
}

/** A buffered writer of request log lines. */
export class RequestLog {
  readonly #sink: LogSink;
  #buffer = "";
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Whether a write is in flight; set before it starts and cleared by it, so no line waits for a write that ended. */
  #writing = false;
  #written: Promise<void> = Promise.resolve();
  #dropped = 0;
  #broken = false;
  #timeMs = 0;
  #timeText = "";

  constructor(sink: LogSink = Deno.stdout) {
    this.#sink = sink;
  }

  /** Buffers the line of one request; never waits. */
  write(entry: RequestLogEntry): void {
    if (this.#broken) return;
    if (this.#buffer.length >= MAX_BUFFERED_CHARS) {
      this.#dropped++;
      return;
    }
    const time = this.#time();
    if (this.#dropped > 0) {
      this.#buffer += `${JSON.stringify({ time, droppedLogLines: this.#dropped })}\n`;
      this.#dropped = 0;
    }
    this.#buffer += `${
      JSON.stringify({
        time,
        requestId: entry.requestId,
        action: entry.action,
        project: entry.project?.slice(0, MAX_NAME_CHARS),
        index: entry.index?.slice(0, MAX_NAME_CHARS),
        status: entry.status,
        ms: Math.round(entry.ms * 1000) / 1000,
      })
    }\n`;
    if (!this.#writing) this.#schedule();
  }

  /** The current time in ISO form, formatted once per millisecond: a busy server answers many requests in one. */
  #time(): string {
    const now = Date.now();
    if (now !== this.#timeMs) {
      this.#timeMs = now;
      this.#timeText = new Date(now).toISOString();
    }
    return this.#timeText;
  }

  /** Writes every buffered line and waits until they are out; leaves no timer behind. */
  async flush(): Promise<void> {
    while (this.#writing || this.#buffer !== "") {
      this.#start();
      await this.#written;
    }
  }

  /** Starts a write when enough lines wait, else makes sure a timer will. */
  #schedule(): void {
    if (this.#buffer.length >= FLUSH_CHARS) this.#start();
    else if (this.#buffer !== "") this.#timer ??= setTimeout(() => this.#start(), FLUSH_DELAY_MS);
  }

  #start(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#writing || this.#buffer === "") return;
    const bytes = encoder.encode(this.#buffer);
    this.#buffer = "";
    this.#writing = true;
    this.#written = this.#write(bytes);
  }

  /** Writes one batch whole; lines buffered meanwhile wait for the next. */
  async #write(bytes: Uint8Array): Promise<void> {
    try {
      for (let offset = 0; offset < bytes.byteLength;) offset += await this.#sink.write(bytes.subarray(offset));
    } catch (error) {
      this.#broken = true;
      this.#buffer = "";
      console.error("Request log stopped: stdout cannot be written:", error);
    }
    this.#writing = false;
    this.#schedule();
  }
}
