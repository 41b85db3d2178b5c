/**
 * Frames: runs of bytes, each after a u32 of its length and padded with zeros to a multiple of 4 bytes. A stream of
 * them can be read a frame at a time as its chunks arrive, whatever the chunks' sizes, so that a long stream is never
 * held whole; padding keeps each frame 4-byte aligned in the stream, for {@link ByteWriter.words}.
 */
import type { ByteWriter } from "./byte_codec.ts";

/** Starts a frame in `out`, whose undrained bytes must end aligned; returns where it starts, for {@link endFrame}. */
export function beginFrame(out: ByteWriter): number {
  const start = out.length;
  out.u32(0);
  return start;
}

/** Ends the frame begun at `start`: fills in its length, and pads it to a multiple of 4 bytes. */
export function endFrame(out: ByteWriter, start: number): void {
  const length = out.length - start - 4;
  while (out.length % 4 !== 0) out.u8(0);
  const header = out.bytes().subarray(start, start + 4);
  new DataView(header.buffer, header.byteOffset, 4).setUint32(0, length, true);
}

/** Reads the frames of a stream of chunks of any size, one at a time. */
export class FrameReader {
  readonly #chunks: AsyncIterator<Uint8Array>;
  #chunk: Uint8Array = new Uint8Array(0);
  #at = 0;
  /** The padding of the frame read last, skipped before the next one. */
  #padding = 0;
  /** Holds a frame that spans chunks. It is reused, so that a long stream passes through it without fresh memory. */
  #joined: Uint8Array = new Uint8Array(0);

  constructor(chunks: AsyncIterable<Uint8Array>) {
    this.#chunks = chunks[Symbol.asyncIterator]();
  }

  /**
   * The next frame, as a view that holds until the next call (it may lie in a buffer that is then reused), or null at
   * the end of the stream. Throws a RangeError when the stream ends within a frame.
   */
  async next(): Promise<Uint8Array | null> {
    await this.#skip(this.#padding);
    if (this.#at === this.#chunk.byteLength && !await this.#pull()) return null;
    const header = await this.#read(4);
    const length = new DataView(header.buffer, header.byteOffset, 4).getUint32(0, true);
    this.#padding = (4 - length % 4) % 4;
    return await this.#read(length);
  }

  /** The next `count` bytes: a view of a chunk when it holds them all, else a copy joined from several. */
  async #read(count: number): Promise<Uint8Array> {
    if (this.#chunk.byteLength - this.#at >= count) return this.#chunk.subarray(this.#at, this.#at += count);
    if (this.#joined.byteLength < count) this.#joined = new Uint8Array(Math.max(count, this.#joined.byteLength * 2));
    for (let filled = 0; filled < count;) {
      if (this.#at === this.#chunk.byteLength && !await this.#pull()) {
        throw new RangeError(`The stream ends ${count - filled} bytes before the end of a frame`);
      }
      const taken = Math.min(count - filled, this.#chunk.byteLength - this.#at);
      this.#joined.set(this.#chunk.subarray(this.#at, this.#at += taken), filled);
      filled += taken;
    }
    return this.#joined.subarray(0, count);
  }

  async #skip(count: number): Promise<void> {
    for (let left = count; left > 0;) {
      if (this.#at === this.#chunk.byteLength && !await this.#pull()) {
        throw new RangeError("The stream ends in padding");
      }
      const skipped = Math.min(left, this.#chunk.byteLength - this.#at);
      this.#at += skipped;
      left -= skipped;
    }
  }

  /** Moves to the next non-empty chunk; false at the end of the stream. */
  async #pull(): Promise<boolean> {
    for (;;) {
      const { done, value } = await this.#chunks.next();
      if (done) return false;
      this.#chunk = value;
      this.#at = 0;
      if (value.byteLength > 0) return true;
    }
  }
}
