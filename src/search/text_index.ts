/**
 * Okapi BM25 full-text scoring over Orama's index. Orama holds the inverted index (its radix tree maps each term to
 * the documents that hold it) and the document ids; this class adds what standard BM25 needs and Orama's own scoring
 * lacks: raw term counts and document lengths with repeats counted (Orama's tokenizer contract dedupes terms). Terms
 * match exactly: no prefixes, no typo tolerance.
 *
 * Every statistic is an integer count, so the same documents give the same scores however the index was built:
 * written live, loaded from a snapshot or rebuilt.
 */
import { components, create, insert, remove } from "@orama/orama";
import { tokenize } from "./tokenize.ts";

const FIELD = "text";

/** BM25 term-frequency saturation (k1) and length normalisation (b), as in Lucene. */
const K1 = 1.2;
const B = 0.75;

/** A node of Orama's radix tree, as far as exact lookups read it. */
interface RadixNode {
  /** Children by first character of their edge label. */
  c: Map<string, RadixNode>;
  /** The edge label leading to this node. */
  s: string;
  /** Whether a term ends here. */
  e: boolean;
  /** The internal ids of the documents holding that term. */
  d: Set<number>;
}

interface DocStats {
  /** Terms in the text, repeats included. */
  length: number;
  /** Counts of the terms that occur more than once; every other term of the text occurs once. */
  repeats?: Map<string, number>;
}

/** A full-text index of document texts. */
export class TextIndex {
  readonly #db = create({
    schema: { [FIELD]: "string" } as const,
    components: {
      tokenizer: {
        language: "english",
        normalizationCache: new Map(),
        tokenize: (raw: string) => [...new Set(tokenize(raw))],
      },
    },
  });
  readonly #stats = new Map<string, DocStats>();
  #totalLength = 0;

  /** Indexes (or re-indexes) the text of `id`. */
  set(id: string, text: string): void {
    this.remove(id);
    const terms = tokenize(text);
    const counts = new Map<string, number>();
    for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
    const stats: DocStats = { length: terms.length };
    if (counts.size < terms.length) {
      stats.repeats = new Map([...counts].filter(([, count]) => count > 1));
    }
    insert(this.#db, { id, [FIELD]: text });
    this.#stats.set(id, stats);
    this.#totalLength += stats.length;
  }

  /** Removes `id` from the index, if present. */
  remove(id: string): void {
    const stats = this.#stats.get(id);
    if (stats === undefined) return;
    remove(this.#db, id);
    this.#stats.delete(id);
    this.#totalLength -= stats.length;
  }

  /** The BM25 score of every document that holds at least one term of `query`. */
  scores(query: string): Map<string, number> {
    const scores = new Map<string, number>();
    const docs = this.#stats.size;
    if (docs === 0) return scores;
    const meanLength = this.#totalLength / docs;
    const idStore = this.#db.internalDocumentIDStore;
    for (const term of new Set(tokenize(query))) {
      const holders = this.#postings(term);
      if (holders === undefined) continue;
      const idf = Math.log(1 + (docs - holders.size + 0.5) / (holders.size + 0.5));
      for (const internalId of holders) {
        const id = components.internalDocumentIDStore.getDocumentIdFromInternalId(idStore, internalId);
        const { length, repeats } = this.#stats.get(id)!;
        const tf = repeats?.get(term) ?? 1;
        const score = idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / meanLength));
        scores.set(id, (scores.get(id) ?? 0) + score);
      }
    }
    return scores;
  }

  /** The documents holding exactly `term`, found by walking Orama's radix tree. */
  #postings(term: string): Set<number> | undefined {
    const tree = this.#db.data.index.indexes[FIELD];
    if (tree?.type !== "Radix") throw new Error(`Orama indexes "${FIELD}" as ${tree?.type}, not as a radix tree`);
    let node = tree.node as unknown as RadixNode;
    let at = 0;
    while (at < term.length) {
      const child = node.c.get(term[at]!);
      if (child === undefined || !term.startsWith(child.s, at)) return undefined;
      node = child;
      at += child.s.length;
    }
    return node.e && node.d.size > 0 ? node.d : undefined;
  }
}
