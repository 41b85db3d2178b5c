/** Little-endian binary writing and reading for the storage formats: integers, floats, strings and byte runs. */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Appends values to a growing buffer, which can be handed on in pieces as it fills (see {@link ByteWriter.drain}). */
export class ByteWriter {
  #bytes: Uint8Array;
  #view: DataView;
  #length = 0;
  /** Bytes handed on by {@link drain}, which count towards the alignment of {@link words}. */
  #drained = 0;

  /** Starts with room for `capacity` bytes; it grows, by copying, when more is written. */
  constructor(capacity = 1024) {
    this.#bytes = new Uint8Array(Math.max(capacity, 16));
    this.#view = new DataView(this.#bytes.buffer);
  }

  /** How many bytes were written since the start or the last {@link drain}. */
  get length(): number {
    return this.#length;
  }

  /** The bytes written so far, as a view of the writer's buffer. */
  bytes(): Uint8Array {
    return this.#bytes.subarray(0, this.#length);
  }

  /**
   * Hands on the bytes written since the start or the last drain, as a view of the writer's buffer, and goes on from
   * the buffer's start: the view holds until the next write. A long output thus passes through one buffer, never whole.
   */
  drain(): Uint8Array {
    const piece = this.bytes();
    this.#drained += this.#length;
    this.#length = 0;
    return piece;
  }

  u8(value: number): void {
    this.#reserve(1);
    this.#view.setUint8(this.#length, value);
    this.#length += 1;
  }

  u32(value: number): void {
    this.#reserve(4);
    this.#view.setUint32(this.#length, value, true);
    this.#length += 4;
  }

  f64(value: number): void {
    this.#reserve(8);
    this.#view.setFloat64(this.#length, value, true);
    this.#length += 8;
  }

  /** A UTF-8 string, after its byte length as u32. */
  string(value: string): void {
    this.#reserve(4 + value.length * 3);
    const { written } = encoder.encodeInto(value, this.#bytes.subarray(this.#length + 4));
    this.#view.setUint32(this.#length, written, true);
    this.#length += 4 + written;
  }

  /** Bytes as they are: after a u32 of their total length, a run that {@link ByteReader.run} reads, in pieces. */
  append(bytes: Uint8Array): void {
    this.#reserve(bytes.byteLength);
    this.#bytes.set(bytes, this.#length);
    this.#length += bytes.byteLength;
  }

  /** Float32 or uint32 values, padded to start 4-byte aligned, so that readers view them without copying. */
  words(values: Float32Array | Uint32Array): void {
    this.u32(values.length);
    this.#reserve(3 + values.byteLength);
    const padding = (4 - (this.#drained + this.#length) % 4) % 4;
    // Zeroed, since a drained buffer holds earlier bytes.
    this.#bytes.fill(0, this.#length, this.#length + padding);
    this.#length += padding;
    this.#bytes.set(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), this.#length);
    this.#length += values.byteLength;
  }

  #reserve(more: number): void {
    if (this.#length + more <= this.#bytes.byteLength) return;
    const bytes = new Uint8Array(Math.max(this.#length + more, this.#bytes.byteLength * 2));
    bytes.set(this.#bytes.subarray(0, this.#length));
    this.#bytes = bytes;
    this.#view = new DataView(bytes.buffer);
  }
}

/** Reads what a {@link ByteWriter} wrote, in the same order; throws a RangeError past the end. */
export class ByteReader {
  readonly #bytes: Uint8Array;
  readonly #view: DataView;
  #offset = 0;

  /** Where the words that {@link #words} read last start in the buffer. */
  #wordsAt = 0;

  constructor(bytes: Uint8Array) {
    // A fresh, aligned copy when the bytes do not start at an aligned offset of their buffer.
    this.#bytes = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
    this.#view = new DataView(this.#bytes.buffer, this.#bytes.byteOffset, this.#bytes.byteLength);
  }

  /** Whether every byte has been read. */
  get done(): boolean {
    return this.#offset >= this.#bytes.byteLength;
  }

  /** How many bytes are left to read. */
  get remaining(): number {
    return Math.max(0, this.#bytes.byteLength - this.#offset);
  }

  u8(): number {
    const value = this.#view.getUint8(this.#offset);
    this.#offset += 1;
    return value;
  }

  u32(): number {
    const value = this.#view.getUint32(this.#offset, true);
    this.#offset += 4;
    return value;
  }

  f64(): number {
    const value = this.#view.getFloat64(this.#offset, true);
    this.#offset += 8;
    return value;
  }

  string(): string {
    return decoder.decode(this.run());
  }

  /** Raw bytes after their length, as a view into the reader's buffer. */
  run(): Uint8Array {
    return this.bytes(this.u32());
  }

  /** The next `count` bytes as they are, as a view into the reader's buffer. */
  bytes(count: number): Uint8Array {
    if (this.#offset + count > this.#bytes.byteLength) throw new RangeError("Byte run passes the end of the data");
    const value = this.#bytes.subarray(this.#offset, this.#offset + count);
    this.#offset += count;
    return value;
  }

  /** Float32 values that {@link ByteWriter.words} wrote, as a view into the reader's buffer. */
  floats(): Float32Array {
    const length = this.#words();
    return new Float32Array(this.#bytes.buffer, this.#wordsAt, length);
  }

  /** Uint32 values that {@link ByteWriter.words} wrote, as a view into the reader's buffer. */
  uints(): Uint32Array {
    const length = this.#words();
    return new Uint32Array(this.#bytes.buffer, this.#wordsAt, length);
  }

  /** Uint32 values that {@link ByteWriter.words} wrote, as a copy; undefined for none, with no typed array made. */
  uintsCopy(): Uint32Array | undefined {
    const length = this.#words();
    return length === 0
      ? undefined
      : new Uint32Array(this.#bytes.buffer.slice(this.#wordsAt, this.#wordsAt + 4 * length));
  }

  /** Uint32 values that {@link ByteWriter.words} wrote, as a plain array: no typed array made for a short list. */
  uintList(): number[] {
    const length = this.#words();
    const at = this.#wordsAt - this.#bytes.byteOffset;
    const list = new Array<number>(length);
    for (let i = 0; i < length; i++) list[i] = this.#view.getUint32(at + 4 * i, true);
    return list;
  }

  /** Reads the length of words and steps past them; returns the length, and leaves where they start in the buffer. */
  #words(): number {
    const length = this.u32();
    this.#offset += (4 - (this.#bytes.byteOffset + this.#offset) % 4) % 4;
    if (this.#offset + length * 4 > this.#bytes.byteLength) throw new RangeError("Words pass the end of the data");
    this.#wordsAt = this.#bytes.byteOffset + this.#offset;
    this.#offset += length * 4;
    return length;
  }
}
