/**
 * Turns input documents into stored ones: splits their texts into passages and embeds each passage whose text has no
 * known vector yet, or takes the document's own vector.
 */
import type { ServiceContext } from "../context.ts";
import type { DocInput } from "../api/request_schemas.ts";
import type { StoredDoc } from "../storage/doc_change_codec.ts";
import type { Passage, PassageSpan } from "../search/indexed_doc.ts";
import { splitPassages } from "../passages/split_passages.ts";
import { sha256Hex } from "../util/sha256_hex.ts";
import type { IndexEmbedding } from "./index_embedding.ts";
import { modelCall } from "./index_embedding.ts";

/**
 * Builds the stored documents of one write. It remembers the vectors of passage texts it has seen (by the SHA-256
 * of the text), from earlier versions of the documents and from its own calls, so that a text is embedded once.
 */
export class StoredDocBuilder {
  readonly #ctx: ServiceContext;
  readonly #embedding: IndexEmbedding;
  readonly #known = new Map<string, Float32Array>();
  readonly #spans = new WeakMap<DocInput, PassageSpan[]>();

  constructor(ctx: ServiceContext, embedding: IndexEmbedding) {
    this.#ctx = ctx;
    this.#embedding = embedding;
  }

  /** Remembers the passage vectors of a stored document, so that its unchanged passages are not embedded again. */
  remember(doc: StoredDoc): void {
    for (const { start, end, vector } of doc.passages) this.#known.set(sha256Hex(doc.text.slice(start, end)), vector);
  }

  /** The stored form of each document, in order. */
  async build(docs: DocInput[]): Promise<StoredDoc[]> {
    const hashes = new Map<DocInput, string[]>();
    const missing = new Map<string, string>();
    for (const doc of docs) {
      if (doc.vector !== undefined) continue;
      const texts = this.#passageSpans(doc).map(({ start, end }) => doc.text.slice(start, end));
      const keys = texts.map((text) => sha256Hex(text));
      keys.forEach((key, i) => {
        if (!this.#known.has(key)) missing.set(key, texts[i]!);
      });
      hashes.set(doc, keys);
    }
    if (missing.size > 0) {
      const { modelId } = this.#embedding;
      const vectors = await modelCall(modelId, () => this.#ctx.embedder.embed(modelId, [...missing.values()]));
      [...missing.keys()].forEach((key, i) => this.#known.set(key, vectors[i]!));
    }
    return docs.map((doc) => {
      const passages: Passage[] = doc.vector === undefined
        ? this.#passageSpans(doc).map((span, i) => ({ ...span, vector: this.#known.get(hashes.get(doc)![i]!)! }))
        : [{ start: 0, end: doc.text.length, vector: new Float32Array(doc.vector) }];
      const stored: StoredDoc = { text: doc.text, passages };
      if (doc.metadata !== undefined) stored.metadata = doc.metadata;
      return stored;
    });
  }

  #passageSpans(doc: DocInput): PassageSpan[] {
    let spans = this.#spans.get(doc);
    if (spans === undefined) {
      const split = this.#embedding.split;
      // An external model's documents always bring vectors: checkDocVectors saw to that.
      if (split === undefined) throw new Error(`Document "${doc.id}" has no vector for an external model`);
      spans = splitPassages(doc.text, split.tokens, split.settings);
      this.#spans.set(doc, spans);
    }
    return spans;
  }
}
