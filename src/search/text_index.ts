/**
 * BM25 full-text scoring on Orama's index, with exact term matching (no prefixes, no typo tolerance) and the
 * Unicode tokenizer of `tokenize.ts`.
 *
 * Orama keeps the mean field length as a running average whose rounding depends on the order of inserts and
 * removals. This index resets it to the exact mean after every change, so that the same documents give the same
 * scores however the index was built: written live, loaded from a snapshot or rebuilt.
 */
import { components, count, create, insert, remove } from "@orama/orama";
import { tokenize } from "./tokenize.ts";

const FIELD = "text";

/** Orama's BM25 parameters (k1, b, and the BM25+ lower bound δ), fixed so that scores stay comparable. */
const BM25_PARAMS = { k: 1.2, b: 0.75, d: 0.5 };

/** Matches any document with at least one query term. */
const ANY_TERM = 1;

/** A full-text index of document texts. */
export class TextIndex {
  readonly #db = create({
    schema: { [FIELD]: "string" } as const,
    components: {
      tokenizer: { language: "english", normalizationCache: new Map(), tokenize: (raw: string) => tokenize(raw) },
    },
  });
  #totalTerms = 0;

  /** Indexes (or re-indexes) the text of `id`. */
  set(id: string, text: string): void {
    this.#removeDoc(id);
    insert(this.#db, { id, [FIELD]: text });
    this.#totalTerms += this.#fieldLength(id);
    this.#resetMeanLength();
  }

  /** Removes `id` from the index, if present. */
  remove(id: string): void {
    this.#removeDoc(id);
    this.#resetMeanLength();
  }

  /** The BM25 score of every document that holds at least one term of `query`. */
  scores(query: string): Map<string, number> {
    const { index, data, tokenizer, internalDocumentIDStore } = this.#db;
    const docs = count(this.#db);
    const matches = docs === 0 ? [] : index.search(
      data.index,
      query,
      tokenizer,
      undefined,
      [FIELD],
      true,
      0,
      {},
      BM25_PARAMS,
      docs,
      undefined,
      ANY_TERM,
    );
    const scores = new Map<string, number>();
    for (const [internalId, score] of matches) {
      scores.set(
        components.internalDocumentIDStore.getDocumentIdFromInternalId(internalDocumentIDStore, internalId),
        score,
      );
    }
    return scores;
  }

  #removeDoc(id: string): void {
    if (this.#db.documentsStore.get(this.#db.data.docs, id) === undefined) return;
    this.#totalTerms -= this.#fieldLength(id);
    remove(this.#db, id);
  }

  #fieldLength(id: string): number {
    const internalId = components.internalDocumentIDStore.getInternalDocumentId(this.#db.internalDocumentIDStore, id);
    return this.#db.data.index.fieldLengths[FIELD]?.[internalId] ?? 0;
  }

  #resetMeanLength(): void {
    const docs = count(this.#db);
    this.#db.data.index.avgFieldLength[FIELD] = docs === 0 ? 0 : this.#totalTerms / docs;
  }
}
