/**
 * Document texts and metadata as a snapshot stores them (UTF-8, metadata as JSON), by slot, in one growing buffer:
 * a load copies each document's bytes here instead of decoding them into strings and objects, which took about a tenth
 * of a load, and a document is decoded when something first reads it (a hit, a filter, a change).
 */
import type { DocContent } from "./indexed_doc.ts";

/** The estimated memory of a decoded content's object, beside its strings and spans. */
export const CONTENT_OBJECT_BYTES = 96;
/** The buffer's first size; it doubles as it fills. */
const FIRST_BYTES = 1 << 20;
const decoder = new TextDecoder();

/** The stored texts and metadata of a snapshot's documents, by slot. */
export class StoredContents {
  #bytes = new Uint8Array(FIRST_BYTES);
  #used = 0;
  /** Per slot: where its text starts, where its metadata starts (the text's end), and where that ends. */
  readonly #offsets: Float64Array;
  /** Per slot with more than one passage or a passage short of the text: the passages' spans. */
  readonly #spans = new Map<number, Uint32Array>();

  /** Room for the documents of `slots` slots. */
  constructor(slots: number) {
    this.#offsets = new Float64Array(slots * 3);
  }

  /** Bytes of memory it holds. */
  get bytes(): number {
    return this.#bytes.byteLength + this.#offsets.byteLength + this.#spans.size * 64;
  }

  /** Copies in a slot's text and metadata as stored (`metadata` empty for none) and its spans, if any. */
  add(slot: number, text: Uint8Array, metadata: Uint8Array, spans?: Uint32Array): void {
    const needed = this.#used + text.byteLength + metadata.byteLength;
    if (needed > this.#bytes.byteLength) {
      const grown = new Uint8Array(Math.max(needed, this.#bytes.byteLength * 2));
      grown.set(this.#bytes.subarray(0, this.#used));
      this.#bytes = grown;
    }
    this.#offsets[slot * 3] = this.#used;
    this.#bytes.set(text, this.#used);
    this.#used += text.byteLength;
    this.#offsets[slot * 3 + 1] = this.#used;
    this.#bytes.set(metadata, this.#used);
    this.#used += metadata.byteLength;
    this.#offsets[slot * 3 + 2] = this.#used;
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

  /** Gives back the room that growing left past the last document: a load calls it once every document is in. */
  trim(): void {
    this.#bytes = this.#bytes.slice(0, this.#used);
  }

  /** A slot's content, decoded anew; the slot must have been added. */
  content(slot: number): DocContent {
    const [start, middle, end] = this.#offsets.subarray(slot * 3, slot * 3 + 3);
    const content: DocContent = { text: decoder.decode(this.#bytes.subarray(start!, middle!)) };
    if (end! > middle!) content.metadata = JSON.parse(decoder.decode(this.#bytes.subarray(middle!, end!)));
    const spans = this.#spans.get(slot);
    if (spans !== undefined) content.spans = spans;
    return content;
  }
}
