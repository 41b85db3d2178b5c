/**
 * The HNSW graph of an index's passages, once the index has one, and the queue of passage vectors waiting to join it.
 * Inserting into the graph costs far more than storing a vector, so a write only writes the waiting vectors' int8
 * codes, which a scan finds at once; the vectors join the graph in multi-threaded batches, once many wait or when the
 * caller flushes them.
 */
import type { AnnIndex } from "./ann_index.ts";
import type { VectorStore } from "./vector_store.ts";
import type { CodesParts, SavedCodes } from "../vector_scan/saved_codes.ts";
import { PendingPassages } from "./pending_passages.ts";

/**
 * Graph inserts wait until this many are pending and then go in, in multi-threaded batches, so that a small write
 * rarely pays for them; meanwhile searches scan the pending vectors' int8 codes.
 */
const MAX_PENDING_GRAPH_INSERTS = 512;

/** An index's graph, if it has one, and the passage slots whose vectors the graph does not hold yet. */
export class GraphQueue {
  readonly #vectors: VectorStore;
  #ann: AnnIndex | undefined;
  /** Passage slots whose vectors the graph does not hold yet: added in batches, at the next search or once many. */
  readonly #pending = new PendingPassages();
  /** Whether a restored graph's codes were written from the vectors, rather than taken from saved ones. */
  #codesDerived = false;

  /** A queue without a graph yet, whose vectors are read from `vectors`. */
  constructor(vectors: VectorStore) {
    this.#vectors = vectors;
  }

  /** The graph, once the index has one. */
  get ann(): AnnIndex | undefined {
    return this.#ann;
  }

  /** How many vectors the graph holds. */
  get held(): number {
    return this.#ann?.size ?? 0;
  }

  /** How many vectors wait to enter the graph. */
  get size(): number {
    return this.#pending.size;
  }

  /** Whether so many vectors wait to enter the graph that they should go in now. */
  get due(): boolean {
    return this.#ann !== undefined && this.#pending.size >= MAX_PENDING_GRAPH_INSERTS;
  }

  /** Whether a passage waits to enter the graph. */
  has(passage: number): boolean {
    return this.#pending.has(passage);
  }

  /** The passages that wait to enter the graph, oldest first. */
  waiting(): number[] {
    return this.#pending.oldest();
  }

  /**
   * Takes a graph restored from a snapshot, which holds no int8 codes (they are written from the vectors, unless
   * `codes` that a load of the same snapshot saved fit) and lacks the vectors that were waiting to join it when it was
   * saved: of `passages`, those wait again.
   */
  restore(ann: AnnIndex, passages: number[], codes?: SavedCodes): void {
    this.#ann = ann;
    this.#codesDerived = codes === undefined || !ann.restoreCodes(codes, passages);
    if (this.#codesDerived) ann.encode(passages, this.#vectors);
    this.#pending.addAll(ann.missing(passages));
  }

  /**
   * The codes of a restored graph in parts, when the restore wrote them from the vectors rather than taking saved ones,
   * for a later load of the same snapshot to take; none otherwise.
   */
  derivedCodes(): CodesParts | undefined {
    return this.#codesDerived ? this.#ann!.codesParts() : undefined;
  }

  /** Takes a new, empty graph, which all of `passages` wait to join. */
  start(ann: AnnIndex, passages: Iterable<number>): void {
    this.#ann = ann;
    this.enqueue(passages);
  }

  /** Makes passages wait to join the graph: their codes are written now, so that a scan finds them meanwhile. */
  enqueue(passages: Iterable<number>): void {
    const waiting = [...passages];
    this.#pending.addAll(waiting);
    this.#ann!.encode(waiting, this.#vectors);
  }

  /** Removes the passages of a deleted document from the graph, or from the queue if they never joined it. */
  remove(passages: readonly number[]): void {
    for (const passage of passages) {
      if (this.#pending.delete(passage)) this.#ann!.removeCodes(passage);
      else this.#ann?.remove(passage);
    }
  }

  /** Adds the pending vectors to the graph (at most `count` of them, the oldest first) in one multi-threaded call. */
  flush(count: number): void {
    if (this.#ann === undefined || this.#pending.size === 0) return;
    const passages = this.#pending.oldest(count);
    this.#ann.add(passages, this.#vectors);
    for (const passage of passages) this.#pending.delete(passage);
  }
}
