/**
 * One index's documents in memory, searchable by BM25 (`fulltext`), cosine similarity (`vector`) or both
 * (`hybrid`), with a metadata filter applied before ranking so that it never costs a page its places.
 */
import type { DocChange } from "../storage/doc_records.ts";
import type { MetadataFilter } from "./metadata_filter.ts";
import { fuseScores } from "./hybrid_fusion.ts";
import { rankPage, type ScoredDoc } from "./ranking.ts";
import { TextIndex } from "./text_index.ts";
import { VectorStore } from "./vector_store.ts";

/** The search modes. */
export const SEARCH_MODES = ["hybrid", "vector", "fulltext"] as const;

/** One search mode. */
export type SearchMode = typeof SEARCH_MODES[number];

/** A query against a {@link SearchIndex}; `vector` is the query embedded with the index's model. */
export interface SearchQuery {
  mode: SearchMode;
  text: string;
  vector?: Float32Array;
  filter?: MetadataFilter;
  offset: number;
  limit: number;
}

/** One page of ranked documents and the number of documents that matched. */
export interface SearchPage {
  hits: ScoredDoc[];
  total: number;
}

/** What a hit can show of its document. */
export interface DocContent {
  text: string;
  metadata?: Record<string, unknown>;
}

/** The searchable state of one index. */
export class SearchIndex {
  readonly #docs = new Map<string, DocContent>();
  readonly #text = new TextIndex();
  readonly #vectors = new VectorStore();

  /** How many documents it holds. */
  get size(): number {
    return this.#docs.size;
  }

  /** Applies a write's document changes: each one replaces or removes one document. */
  apply(changes: Iterable<DocChange>): void {
    for (const { id, doc } of changes) {
      if (doc === null) {
        this.#docs.delete(id);
        this.#text.remove(id);
        this.#vectors.remove(id);
        continue;
      }
      this.#docs.set(id, doc.metadata === undefined ? { text: doc.text } : { text: doc.text, metadata: doc.metadata });
      this.#text.set(id, doc.text);
      this.#vectors.set(id, doc.vector);
    }
  }

  /** The text and metadata of a document. */
  content(id: string): DocContent | undefined {
    return this.#docs.get(id);
  }

  /** Finds, filters and ranks documents; `vector` and `hybrid` queries need `query.vector`. */
  search(query: SearchQuery): SearchPage {
    const { filter } = query;
    const keep = filter === undefined ? undefined : (id: string) => filter(this.#docs.get(id)?.metadata);
    let ids: string[];
    let scores: number[];
    if (query.mode === "fulltext") {
      ids = [];
      scores = [];
      for (const [id, score] of this.#text.scores(query.text)) {
        if (keep !== undefined && !keep(id)) continue;
        ids.push(id);
        scores.push(score);
      }
    } else {
      if (query.vector === undefined) throw new TypeError(`A "${query.mode}" search needs the query vector`);
      ({ ids, scores } = this.#vectors.similarities(query.vector, keep));
      if (query.mode === "hybrid") {
        const bm25 = this.#text.scores(query.text);
        scores = fuseScores(scores, ids.map((id) => bm25.get(id) ?? 0));
      }
    }
    return { hits: rankPage(ids, scores, query.offset, query.limit), total: ids.length };
  }
}
