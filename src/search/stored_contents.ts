/**
 * Document texts and metadata as a snapshot stores them (UTF-8, metadata as JSON), by slot, in buffers of a few MiB
 * filled in turn: a load copies each document's bytes here instead of decoding them into strings and objects, which took
 * about a tenth of a load, and a document is decoded when something first reads it (a hit, a filter, a change). The
 * buffers are never copied as they fill (one growing buffer, doubled and trimmed, cost a million documents' load a
 * fifth of its time).
 */
import type { DocContent } from "./indexed_doc.ts";

/** The estimated memory of a decoded content's object, beside its strings and spans. */
export const CONTENT_OBJECT_BYTES = 96;
/** The size of a buffer, unless one document needs more. */
const CHUNK_BYTES = 4 << 20;
/** A place is its buffer's number times this, plus the offset in the buffer. */
const CHUNK_STRIDE = 2 ** 32;
const decoder = new TextDecoder();

/** The stored texts and metadata of a snapshot's documents, by slot. */
export class StoredContents {
  readonly #chunks: Uint8Array[] = [];
  /** Bytes used of the last buffer. */
  #used = 0;
  /** Per slot, as places: where its text starts, where its metadata starts (the text's end), and where that ends. */
  readonly #offsets: Float64Array;
  /** Per slot with more than one passage or a passage short of the text: the passages' spans. */
  readonly #spans = new Map<number, Uint32Array>();

  /** Room for the documents of `slots` slots. */
  constructor(slots: number) {
    this.#offsets = new Float64Array(slots * 3);
  }

  /** Bytes of memory it holds. */
  get bytes(): number {
    let bytes = this.#offsets.byteLength + this.#spans.size * 64;
    for (const chunk of this.#chunks) bytes += chunk.byteLength;
    return bytes;
  }

  /** Copies in a slot's text and metadata as stored (`metadata` empty for none) and its spans, if any. */
  add(slot: number, text: Uint8Array, metadata: Uint8Array, spans?: Uint32Array): void {
    const bytes = text.byteLength + metadata.byteLength;
    let chunk = this.#chunks.at(-1);
    if (chunk === undefined || this.#used + bytes > chunk.byteLength) {
      // A buffer left with much room (before a large document) gives it back.
      if (chunk !== undefined && this.#used < chunk.byteLength * 0.875) this.trim();
      chunk = new Uint8Array(Math.max(CHUNK_BYTES, bytes));
      this.#chunks.push(chunk);
      this.#used = 0;
    }
    const base = (this.#chunks.length - 1) * CHUNK_STRIDE;
    this.#offsets[slot * 3] = base + this.#used;
    chunk.set(text, this.#used);
    this.#used += text.byteLength;
    this.#offsets[slot * 3 + 1] = base + this.#used;
    chunk.set(metadata, this.#used);
    this.#used += metadata.byteLength;
    this.#offsets[slot * 3 + 2] = base + this.#used;
    if (spans !== undefined) this.#spans.set(slot, spans);
  }

  /**
   * The memory a slot's content takes once decoded (UTF-16 strings, metadata as JSON's length, an object, its spans),
   * estimated from its stored bytes as `DocSlots` estimates a content it holds.
   */
  decodedBytes(slot: number): number {
    const [start, , end] = this.#offsets.subarray(slot * 3, slot * 3 + 3);
    return 2 * (end! - start!) + CONTENT_OBJECT_BYTES + (this.#spans.get(slot)?.byteLength ?? 0);
  }

  /** Gives back the room left past the last document: a load calls it once every document is in. */
  trim(): void {
    const last = this.#chunks.length - 1;
    if (last >= 0 && this.#used < this.#chunks[last]!.byteLength) {
      this.#chunks[last] = this.#chunks[last]!.slice(0, this.#used);
    }
  }

  /** A slot's content, decoded anew; the slot must have been added. */
  content(slot: number): DocContent {
    const [start, middle, end] = this.#offsets.subarray(slot * 3, slot * 3 + 3);
    const chunk = this.#chunks[Math.floor(start! / CHUNK_STRIDE)]!;
    const [from, to] = [start! % CHUNK_STRIDE, middle! % CHUNK_STRIDE];
    const content: DocContent = { text: decoder.decode(chunk.subarray(from, to)) };
    if (end! > middle!) content.metadata = JSON.parse(decoder.decode(chunk.subarray(to, end! % CHUNK_STRIDE)));
    const spans = this.#spans.get(slot);
    if (spans !== undefined) content.spans = spans;
    return content;
  }
}
