/**
 * Which passages a vector search scores, and each document's score: its best passage's. A filtered index, or a query
 * that reaches too deep for candidates to serve, scores every passage. Otherwise candidates come from a native exact
 * scan while the index is small, and from its HNSW graph (or a scan of the graph's int8 codes, as the tuned plan says)
 * once it is large, with the nearest of the passages still waiting to join the graph. Candidates only propose: every
 * score is a cosine of the stored vectors (see `VectorStore`).
 */
import type { AnnGraphs } from "./ann_graphs.ts";
import type { DocSlots } from "./doc_slots.ts";
import type { GraphQueue } from "./graph_queue.ts";
import { RECENT_QUERIES, scanDepth, UNTUNED_PLAN, type VectorPlan } from "./vector_plan.ts";
import type { SlotScores, VectorStore } from "./vector_store.ts";

/**
 * Up to this many passage vectors, vector search scans every one; the HNSW graph is built when an index first grows
 * past it (or loads past it without one), and from then on proposes the candidates of unfiltered queries.
 */
export const EXACT_SEARCH_MAX_VECTORS = 10_000;

/**
 * From this share of the passages waiting for the graph, a search scans every passage's codes instead of the graph and
 * the waiting ones' codes gathered together: gathering the codes of many scattered passages costs more than scanning
 * every code in order. A bulk load that outruns the graph leaves that many.
 */
const FULL_SCAN_WAITING_SHARE = 0.25;

/**
 * Candidates the graph proposes per hit wanted (at least {@link MIN_ANN_CANDIDATES}), times the passages per
 * document, rescored from the stored vectors.
 */
const ANN_OVERSAMPLING = 4;
/** The fewest candidates a search asks for, before the passages per document multiply them; tuning measures at this. */
export const MIN_ANN_CANDIDATES = 200;

/** Vector scores per document slot: the best passage's score, and that passage's slot. */
export interface DocScores extends SlotScores {
  best: number[];
}

/** Where {@link VectorCandidates} finds candidates, besides the slot table. */
export interface CandidateSources {
  /** The passages' vectors, which score every candidate. */
  vectors: VectorStore;
  /** The graph, once the index has one, and the passages waiting to join it. */
  graph: GraphQueue;
  /** The native exact scan and the graphs; without them every vector search scores every passage. */
  graphs?: AnnGraphs | undefined;
}

/** Finds and scores the vector candidates of one index's searches, and keeps what tuning the graph side needs. */
export class VectorCandidates {
  readonly #docs: DocSlots;
  readonly #vectors: VectorStore;
  readonly #graph: GraphQueue;
  readonly #graphs: AnnGraphs | undefined;
  /**
   * How the graph side finds candidates: restored beside its graph, or tuned from the index's vectors (see
   * `SearchIndex.vectorTuning`).
   */
  plan: VectorPlan = UNTUNED_PLAN;
  /** The latest query vectors that the graph side served, oldest first, to tune on. */
  readonly #recentQueries: Float32Array[] = [];

  /** Candidates of the documents in `docs`, found through `sources`. */
  constructor(docs: DocSlots, sources: CandidateSources) {
    this.#docs = docs;
    this.#vectors = sources.vectors;
    this.#graph = sources.graph;
    this.#graphs = sources.graphs;
  }

  /** The latest query vectors that the graph side served, oldest first. */
  get recentQueries(): readonly Float32Array[] {
    return this.#recentQueries;
  }

  /**
   * How many passages to ask the graph (or a small index's native scan) for to find the `wanted` nearest documents, or
   * undefined to score every document: a filtered index is scored whole, and so is a query that reaches too deep for
   * candidates to serve, or a small index without the native scan (`EMBEDDING_BACKEND=wasm`).
   */
  count(wanted: number, keep?: (slot: number) => boolean): number | undefined {
    const passageCount = this.#docs.passageCount;
    const perDoc = Math.ceil(passageCount / Math.max(1, this.#docs.size));
    const candidates = Math.max(MIN_ANN_CANDIDATES, wanted * ANN_OVERSAMPLING) * perDoc;
    const useCandidates = keep === undefined && this.#graphs !== undefined && candidates < passageCount / 2;
    return useCandidates ? candidates : undefined;
  }

  /**
   * The passages to score for the `count` nearest candidates: where every document is one passage, the candidates
   * themselves; otherwise every passage of the documents that own them. The graph proposes passages, but every passage
   * of a proposed document is then scored, so that its score is its best passage's whether or not the graph found
   * that one.
   */
  passages(query: Float32Array, count: number): number[] {
    const nearest = this.#nearestPassages(query, count);
    return this.#docs.onePassageEach ? nearest : this.#docs.passagesOf(this.#docs.ownersOf(nearest));
  }

  /** Scores passages (each one at most once) and keeps each document's best. */
  docScores(query: Float32Array, passages: number[]): DocScores {
    const found = this.#vectors.scores(query, passages);
    const owners = this.#docs.owners;
    if (this.#docs.onePassageEach) {
      // Each passage scored is a document of its own.
      return { slots: found.slots.map((passage) => owners[passage]!), scores: found.scores, best: found.slots };
    }
    const result: DocScores = { slots: [], scores: [], best: [] };
    const at = new Map<number, number>();
    found.slots.forEach((passage, i) => {
      const slot = owners[passage]!;
      const score = found.scores[i]!;
      const position = at.get(slot);
      if (position === undefined) {
        at.set(slot, result.slots.length);
        result.slots.push(slot);
        result.scores.push(score);
        result.best.push(passage);
      } else if (score > result.scores[position]!) {
        result.scores[position] = score;
        result.best[position] = passage;
      }
    });
    return result;
  }

  /**
   * The nearest passage candidates: from the graph in an index large enough to have one (or that had float16 rows, and
   * so a graph, before it shrank); otherwise from a native exact scan of the float32 vectors on every core, which costs
   * far less than scoring every one in JavaScript.
   */
  #nearestPassages(query: Float32Array, count: number): number[] {
    const large = this.#docs.passageCount > EXACT_SEARCH_MAX_VECTORS || this.#vectors.halfRows;
    if (this.#graph.ann !== undefined && large) {
      return this.#graphCandidates(query, count);
    }
    this.#vectors.checkDims(query);
    const owners = this.#docs.owners;
    const rows = owners.length;
    // Free passage slots may hold old vectors: as many more are asked for, and then left out.
    const found = this.#graphs!.nearestRows(
      this.#vectors.rows(rows),
      this.#vectors.dims,
      query,
      Math.min(count + this.#docs.freePassageCount, rows),
    );
    return found.filter((passage) => owners[passage]! >= 0);
  }

  /**
   * The nearest passage candidates as the plan finds them. A scan of the codes covers the passages still waiting to
   * enter the graph; a graph search adds the nearest of those by a scan of their codes alone, unless so many wait that
   * scanning every code costs less (see {@link FULL_SCAN_WAITING_SHARE}).
   */
  #graphCandidates(query: Float32Array, count: number): number[] {
    this.#recentQueries.push(query.slice());
    if (this.#recentQueries.length > RECENT_QUERIES) this.#recentQueries.shift();
    const ann = this.#graph.ann!;
    const waiting = this.#graph.size;
    const scan = this.plan.scan || waiting >= this.#docs.passageCount * FULL_SCAN_WAITING_SHARE;
    const found = scan
      ? ann.scan(query, count, this.plan.scan ? scanDepth(this.plan, this.#docs.passageCount) : undefined)
      : ann.search(query, count, this.plan.breadth);
    // Only passages that a document still owns are candidates.
    const owners = this.#docs.owners;
    const candidates = found.filter((passage) => owners[passage]! >= 0);
    if (!scan && waiting > 0) {
      candidates.push(...ann.scanAmong(query, count, this.#graph.waiting()));
    }
    return candidates;
  }
}
