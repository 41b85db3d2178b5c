/**
 * Files of JSON Lines, gzip-compressed, as a backup holds them: readable by their owner only, written with their
 * SHA-256 and size counted on the way to disk and flushed to it (fsync) before they count as written, and read back a
 * line at a time.
 */
import { createHash } from "node:crypto";
import { textLines } from "../util/text_lines.ts";
import { createPrivateFile } from "./private_files.ts";

/** What a file holds once written: its size and checksum on disk, and its lines. */
export interface WrittenFile {
  bytes: number;
  sha256: string;
  lines: number;
}

/** Text gathered before it is handed to the compressor: fewer, larger writes. */
const BUFFER_CHARS = 256 * 1024;

/** Writes JSON Lines to a new gzip file; {@link close} flushes it to disk and returns its size and checksum. */
export class JsonLinesGzipWriter {
  readonly #file: Deno.FsFile;
  readonly #input: WritableStreamDefaultWriter<BufferSource>;
  readonly #drained: Promise<void>;
  readonly #hash = createHash("sha256");
  readonly #encoder = new TextEncoder();
  #bytes = 0;
  #lines = 0;
  #buffer: string[] = [];
  #bufferChars = 0;

  private constructor(file: Deno.FsFile) {
    this.#file = file;
    const gzip = new CompressionStream("gzip");
    this.#input = gzip.writable.getWriter();
    this.#drained = this.#drain(gzip.readable);
    // Awaited in close(); a failure before then also shows at the next write.
    this.#drained.catch(() => {});
  }

  /** Creates (or truncates) the file at `path`, readable by its owner only. */
  static async create(path: string): Promise<JsonLinesGzipWriter> {
    return new JsonLinesGzipWriter(await createPrivateFile(path));
  }

  /** Appends one line holding `value` as JSON. */
  async write(value: unknown): Promise<void> {
    const line = JSON.stringify(value);
    this.#buffer.push(line, "\n");
    this.#bufferChars += line.length + 1;
    this.#lines++;
    if (this.#bufferChars >= BUFFER_CHARS) await this.#flushBuffer();
  }

  /** Writes out what is left, flushes the file to disk and closes it. */
  async close(): Promise<WrittenFile> {
    try {
      await this.#flushBuffer();
      await this.#input.close();
      await this.#drained;
      await this.#file.sync();
    } finally {
      this.#file.close();
    }
    return { bytes: this.#bytes, sha256: this.#hash.digest("hex"), lines: this.#lines };
  }

  /** Closes the file, keeping nothing of what was written; for a copy that is given up. */
  async abort(): Promise<void> {
    await this.#input.abort().catch(() => {});
    await this.#drained.catch(() => {});
    try {
      this.#file.close();
    } catch {
      // Already closed.
    }
  }

  async #flushBuffer(): Promise<void> {
    if (this.#bufferChars === 0) return;
    const text = this.#buffer.join("");
    this.#buffer = [];
    this.#bufferChars = 0;
    await this.#input.write(this.#encoder.encode(text));
  }

  async #drain(compressed: ReadableStream<Uint8Array>): Promise<void> {
    for await (const chunk of compressed) {
      this.#hash.update(chunk);
      this.#bytes += chunk.byteLength;
      for (let at = 0; at < chunk.byteLength;) at += await this.#file.write(chunk.subarray(at));
    }
  }
}

/** The lines of a gzip file of JSON Lines, each parsed, in order. */
export async function* readJsonLinesGzip(path: string): AsyncGenerator<unknown> {
  const file = await Deno.open(path, { read: true });
  // The stream closes the file once read to its end, or when the reader stops early.
  const text = file.readable.pipeThrough(new DecompressionStream("gzip"));
  for await (const line of textLines(text)) if (line !== "") yield JSON.parse(line);
}

/** The size and lowercase hex SHA-256 of the file at `path`, read as a stream. */
export async function fileChecksum(path: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash("sha256");
  let bytes = 0;
  // The stream closes the file once read to its end.
  const file = await Deno.open(path, { read: true });
  for await (const chunk of file.readable) {
    hash.update(chunk);
    bytes += chunk.byteLength;
  }
  return { bytes, sha256: hash.digest("hex") };
}
