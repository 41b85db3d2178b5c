/**
 * An index's search state as it stood at one moment, readable while writes go on changing the index: what a snapshot
 * encodes a slice at a time. The index tells the view of each document slot it is about to change, and the view keeps
 * that slot's original first (its document, term counts and vectors), so that every read shows the moment the view was
 * opened. A write thus costs the view one copy of the documents it changes; the rest is read where it lives.
 */
import type { GraphFile } from "./ann_index.ts";
import type { DocContent } from "./indexed_doc.ts";
import type { SearchIndexParts } from "./search_index_parts.ts";
import type { Posting } from "./text_index.ts";
import type { VectorPlan } from "./vector_plan.ts";

/** A document as a snapshot stores it: id, content, term count, and its passages' slots and vectors. */
export interface ViewedDoc {
  id: string;
  content: DocContent;
  length: number;
  passages: readonly number[];
  vectors: Float32Array[];
}

/**
 * What {@link SnapshotView} reads: the index's live parts, which it only reads, with its graph already saved to a
 * temporary file that {@link SnapshotView.close} removes.
 */
export interface ViewedParts extends Omit<SearchIndexParts, "ann" | "codes" | "ids" | "stored" | "passages"> {
  ids: readonly (string | undefined)[];
  /** The content of a slot; undefined for a free one. */
  contentOf(slot: number): DocContent | undefined;
  /** The passage slots of each document slot, in passage order. */
  passages: readonly (readonly number[] | undefined)[];
  /** Passage slots (vector rows) when opened: later ones did not exist. */
  rows: number;
  graph?: GraphFile | undefined;
}

/** The state of a search index when the view was opened. */
export class SnapshotView {
  readonly revision: number;
  /** Document slots when opened: later ones did not exist. */
  readonly slots: number;
  /** Vector rows when opened: later ones did not exist. */
  readonly rows: number;
  readonly dims: number;
  /** Whether the vectors are float16 rows (see `VectorStore.halfRows`): a snapshot stores them so. */
  readonly halfRows: boolean;
  readonly language: string;
  readonly graph: GraphFile | undefined;
  /** How the graph side found vector candidates. */
  readonly plan: VectorPlan | undefined;
  /** Every term some document held, in no set order. */
  readonly terms: readonly string[];
  /** Every word of the typo and prefix tree, in no set order: {@link keepsVariant} says which a snapshot stores. */
  readonly variantWords: readonly string[];
  readonly #parts: ViewedParts;
  readonly #termSet: ReadonlySet<string>;
  /** The slots changed since opening, each with its original document, or null where it was empty. */
  readonly #kept = new Map<number, ViewedDoc | null>();
  /** The original vector of each row that a kept document held. */
  readonly #keptRows = new Map<number, Float32Array>();
  /** The original length of each row that a kept document held (see `VectorStore.lengthsOf`). */
  readonly #keptLengths = new Map<number, number>();
  /** Per term, the kept original documents that held it, and how often. */
  readonly #keptTerms = new Map<string, Map<number, number>>();
  readonly #onClose: () => void;

  /** Opens a view of `parts`; the index must call {@link keep} before it changes a slot, until `onClose` runs. */
  constructor(parts: ViewedParts, onClose: () => void) {
    this.#parts = parts;
    this.#onClose = onClose;
    this.revision = parts.revision;
    this.slots = parts.ids.length;
    this.rows = parts.rows;
    this.dims = parts.vectors.dims;
    this.halfRows = parts.vectors.halfRows;
    this.language = parts.text.analyzer.language;
    this.graph = parts.graph;
    this.plan = parts.plan;
    this.terms = parts.text.terms();
    this.#termSet = new Set(this.terms);
    this.variantWords = parts.text.variantWords();
  }

  /** Keeps the original of a slot that is about to change, unless it is kept already or came after the view. */
  keep(slot: number): void {
    if (slot >= this.slots || this.#kept.has(slot)) return;
    const doc = this.#live(slot);
    if (doc === undefined) {
      this.#kept.set(slot, null);
      return;
    }
    const vectors = doc.vectors.map((vector) => vector.slice());
    this.#kept.set(slot, { ...doc, vectors });
    doc.passages.forEach((row, i) => {
      this.#keptRows.set(row, vectors[i]!);
      this.#keptLengths.set(row, this.#parts.vectors.lengthsOf(row + 1)[row]!);
    });
    for (const [term, count] of this.#parts.text.termCounts(doc.content.text)) {
      let holders = this.#keptTerms.get(term);
      if (holders === undefined) this.#keptTerms.set(term, holders = new Map());
      holders.set(slot, count);
    }
  }

  /** The document a slot held, if any. */
  doc(slot: number): ViewedDoc | undefined {
    const kept = this.#kept.get(slot);
    return kept === undefined ? this.#live(slot) : kept ?? undefined;
  }

  /**
   * The stored rows of `count` vector rows from `from` on, as bytes in the store's kind (see `VectorStore.rowsOf`), as
   * they stood when the view was opened: live rows, with the originals of rows that a write has changed since. Rows
   * that no document held then hold anything.
   */
  rowsOf(from: number, count: number, storedRow: (vector: Float32Array) => Uint8Array): Uint8Array {
    const vectors = this.#parts.vectors;
    const bytes = vectors.rowsOf(from, count).slice();
    for (const [row, vector] of this.#keptRows) {
      if (row >= from && row < from + count) bytes.set(storedRow(vector), (row - from) * vectors.rowBytes);
    }
    return bytes;
  }

  /** The lengths of `count` vector rows from `from` on, as they stood when the view was opened (see {@link rowsOf}). */
  lengthsOf(from: number, count: number): Float64Array {
    const lengths = this.#parts.vectors.lengthsOf(from + count).slice(from);
    for (const [row, length] of this.#keptLengths) {
      if (row >= from && row < from + count) lengths[row - from] = length;
    }
    return lengths;
  }

  /** The documents that held `term`, and how often each held it. */
  posting(term: string): Posting {
    const { slots, counts } = this.#parts.text.posting(term, (slot) => slot >= this.slots || this.#kept.has(slot));
    for (const [slot, count] of this.#keptTerms.get(term) ?? []) {
      slots.push(slot);
      counts.push(count);
    }
    return { term, slots, counts };
  }

  /** Whether a word of {@link variantWords} is stored: whether some document held its term. */
  keepsVariant(word: string): boolean {
    return this.#termSet.has(this.#parts.text.analyzer.stem(word));
  }

  /** Stops keeping originals, and removes the graph's file. */
  close(): void {
    this.#onClose();
    if (this.graph !== undefined) Deno.removeSync(this.graph.path);
  }

  #live(slot: number): ViewedDoc | undefined {
    const { ids, passages, vectors, text } = this.#parts;
    const id = ids[slot];
    if (id === undefined) return undefined;
    const rows = passages[slot]!;
    return {
      id,
      content: this.#parts.contentOf(slot)!,
      length: text.length(slot),
      passages: rows,
      vectors: rows.map((row) => vectors.row(row)),
    };
  }
}
