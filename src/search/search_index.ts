/**
 * One index's documents in memory, searchable by BM25 (`fulltext`), cosine similarity (`vector`) or both
 * (`hybrid`), with a metadata filter applied before ranking so that it never costs a page its places.
 *
 * Each document lives in a slot, and each of its passages' vectors in a passage slot (see `DocSlots`). A document's
 * vector score is its best passage's. Vector candidates come from an exact scan while the index is small or filtered,
 * and from an HNSW graph of passages once it is large (when the index has a source of graphs), whose inserts wait in a
 * queue (see `VectorCandidates` and `GraphQueue`); either way scores are cosines of the stored vectors (see
 * `VectorStore`). This module ties the parts together: it applies writes to each, and ranks, fuses and pages results.
 */
import type { AnnGraphs } from "./ann_graphs.ts";
import { fuseScores, fusionScale } from "./hybrid_fusion.ts";
import { bestPositions, type Page, rankPage } from "./ranking.ts";
import { TextIndex } from "./text_index.ts";
import type { MatchOptions, TextQuery, TextScores } from "./text_query.ts";
import { type Analyzer, analyzerFor } from "../fulltext/analyzer.ts";
import { facetCounts } from "./facet_counts.ts";
import { sortOrder } from "./sort_order.ts";
import { MetadataColumns } from "./metadata_columns.ts";
import { type ScoredSlots, VectorStore } from "./vector_store.ts";
import { SnapshotView } from "./snapshot_view.ts";
import { tuneVectorPlan, tuningDue, type VectorPlan } from "./vector_plan.ts";
import type { DocContent, DocUpdate, IndexedDoc } from "./indexed_doc.ts";
import type { SearchIndexParts } from "./search_index_parts.ts";
import type { ScoredDoc, SearchPage, SearchQuery } from "./search_query.ts";
import { DocSlots } from "./doc_slots.ts";
import { GraphQueue } from "./graph_queue.ts";
import { type DocScores, EXACT_SEARCH_MAX_VECTORS, MIN_ANN_CANDIDATES, VectorCandidates } from "./vector_candidates.ts";
import { tuningProbe } from "./vector_tuning.ts";
import type { CodesParts } from "../vector_scan/saved_codes.ts";

/** Hybrid scales its two parts over this many nearest documents and this many best BM25 matches. */
const HYBRID_POOL = 200;
/**
 * Where the graph proposes the nearest documents, hybrid also scores this many best BM25 matches exactly, so that a
 * strong text match with a middling vector is not missed. On texts unrelated to their vectors (`bench:hybrid`), the
 * fewer matches are scored, the more of the exhaustive fusion's top 10 the fused top 10 lose.
 */
const HYBRID_TEXT_CANDIDATES = 500;
/**
 * And at least this share of its BM25 matches: the fused top 10 are good on both sides without being the best on
 * either, and lie deeper in the text side's order as it grows, so that a fixed count of matches misses more of them
 * the more documents a query matches.
 */
const HYBRID_TEXT_SHARE = 1 / 64;

/** Words match exactly: no typos, no prefixes. */
const EXACT: MatchOptions = { typoTolerance: false, prefix: false };

/** How {@link SearchIndex.apply} applies a batch of changes. */
export interface ApplyOptions {
  /** The revision the index shows once the changes are in; unchanged when absent (e.g. a load in batches). */
  revision?: number;
  /** Graph inserts wait for {@link SearchIndex.flushGraph} however many pile up: the caller adds them in slices. */
  deferGraph?: boolean;
}

/** What a {@link SearchIndex} starts from: any parts a snapshot restored, and where its graphs come from. */
export interface SearchIndexInit extends Partial<SearchIndexParts> {
  revision: number;
  /** The language of its full-text side, when `text` is not given; English by default. */
  language?: string | undefined;
  /** Makes the HNSW graph of a large index; without it every vector search scans exactly. */
  graphs?: AnnGraphs | undefined;
}

/** Scored documents of a search, how many matched (in hybrid mode also by text), each one's best passage slot. */
interface Found extends ScoredSlots {
  total: number;
  best?: number[];
  textMatches?: number;
}

/** The searchable state of one index at one revision. */
export class SearchIndex {
  #revision: number;
  readonly #docs: DocSlots;
  readonly #vectors: VectorStore;
  readonly #text: TextIndex;
  readonly #graphs: AnnGraphs | undefined;
  /** The graph, once the index has one, and the passages waiting to join it. */
  readonly #graph: GraphQueue;
  readonly #vectorCandidates: VectorCandidates;
  #tuning = false;
  /** Open snapshot views, told of each slot before it changes. */
  readonly #views = new Set<SnapshotView>();
  /** Metadata fields that facets and sort have asked for, as columns. */
  readonly #columns: MetadataColumns;

  constructor(init: SearchIndexInit) {
    this.#revision = init.revision;
    const docs = new DocSlots(init);
    this.#docs = docs;
    this.#vectors = init.vectors ?? new VectorStore();
    this.#text = init.text ?? new TextIndex(analyzerFor(init.language));
    this.#graphs = init.graphs;
    this.#graph = new GraphQueue(this.#vectors);
    this.#vectorCandidates = new VectorCandidates(docs, {
      vectors: this.#vectors,
      graph: this.#graph,
      graphs: init.graphs,
    });
    this.#columns = new MetadataColumns((slot) => docs.contentOf(slot)?.metadata, () => docs.ids.length);
    const ann = init.graphs === undefined ? undefined : init.ann;
    if (ann !== undefined) {
      if (init.plan !== undefined) this.#vectorCandidates.plan = init.plan;
      this.#graph.restore(ann, [...docs.occupiedPassages()], init.codes);
    } else if (this.#graphs !== undefined && docs.passageCount > EXACT_SEARCH_MAX_VECTORS) {
      // A large index restored without a graph (a snapshot written without USearch): its vectors join a new graph in
      // the background, and until then searches scan their codes.
      this.#graph.start(this.#graphs.create(this.#vectors.dims), docs.occupiedPassages());
    }
  }

  /** The index revision this state shows. */
  get revision(): number {
    return this.#revision;
  }

  /** Bytes of memory it holds, estimated: documents, vectors, postings and the graph. */
  memoryBytes(): number {
    return this.#docs.bytes + this.#vectors.bytes + this.#text.bytes + (this.#graph.ann?.bytes ?? 0) +
      this.#columns.bytes;
  }

  /** The codes its graph's restore wrote from the vectors, in parts for a later load of the same snapshot (if any). */
  derivedCodes(): CodesParts | undefined {
    return this.#graph.derivedCodes();
  }

  /** How many documents it holds. */
  get size(): number {
    return this.#docs.size;
  }

  /** How many passages (and so vectors) it holds. */
  get passageCount(): number {
    return this.#docs.passageCount;
  }

  /**
   * A view of the index as it stands now, which later changes do not alter, for a snapshot to read in slices; the graph
   * is saved as it stands, without the vectors waiting to join it. Close the view when done: until then, each change
   * copies the documents it touches.
   */
  openSnapshotView(): SnapshotView {
    const view = new SnapshotView({
      revision: this.#revision,
      ...this.#docs.viewed,
      vectors: this.#vectors,
      text: this.#text,
      graph: this.#graph.ann?.saveFile(),
      plan: this.#vectorCandidates.plan,
    }, () => this.#views.delete(view));
    this.#views.add(view);
    return view;
  }

  /** Applies a write's document changes: each one replaces or removes one document. */
  apply(changes: Iterable<DocUpdate>, options: ApplyOptions = {}): void {
    const added: number[] = [];
    for (const { id, doc } of changes) {
      const slot = this.#docs.slotOf(id);
      if (slot !== undefined) this.#clear(slot);
      if (doc !== null) added.push(...this.#fill(id, doc));
    }
    if (this.#graph.ann !== undefined) {
      this.#graph.enqueue(added);
    } else if (this.#graphs !== undefined && this.#docs.passageCount > EXACT_SEARCH_MAX_VECTORS) {
      // The new graph's vectors all wait to join it, as a restored index's do.
      this.#graph.start(this.#graphs.create(this.#vectors.dims), this.#docs.occupiedPassages());
    }
    if (!options.deferGraph && this.graphInsertsDue) this.flushGraph();
    if (options.revision !== undefined) this.#revision = options.revision;
  }

  /** Whether it holds a document of that id (without reading its text, which a restored index keeps encoded). */
  holds(id: string): boolean {
    return this.#docs.slotOf(id) !== undefined;
  }

  /** The text and metadata of a document; `slot`, a hit's, spares looking the id up while it still holds it. */
  content(id: string, slot?: number): DocContent | undefined {
    return this.#docs.content(id, slot);
  }

  /** How the full-text side analyzes texts: its language, stemmer and stop words. */
  get analyzer(): Analyzer {
    return this.#text.analyzer;
  }

  /** The terms the words of `text` match in this index, as `match` allows. */
  textQuery(text: string, match: MatchOptions = EXACT): TextQuery {
    return this.#text.query(text, match);
  }

  /** Finds, filters and ranks documents; `vector` and `hybrid` queries need `query.vector`. */
  search(query: SearchQuery): SearchPage {
    const { filter } = query;
    const docs = this.#docs;
    const keep = filter === undefined ? undefined : (slot: number) => filter(docs.contentOf(slot)!.metadata);
    const textQuery = query.mode === "vector"
      ? undefined
      : query.textQuery ?? this.#text.query(query.text, query.match ?? EXACT);
    if (query.mode !== "fulltext") {
      if (query.vector === undefined) throw new TypeError(`A "${query.mode}" search needs the query vector`);
      this.#vectors.checkDims(query.vector);
    }
    if (query.mode === "fulltext") {
      // The page is cut while the text side's arrays stand: a query of a large index can match a large share of its
      // documents, and copying their slots and scores costs more than ranking them.
      return this.#text.withScores(
        textQuery!,
        keep,
        (found) => this.#page(query, { ...found, total: found.slots.length }, textQuery, () => found.slots),
      );
    }
    // Every document matches in vector and hybrid modes (they rank, they exclude nothing): all that pass the filter.
    const found = this.#vectorSearch(query, textQuery, keep);
    return this.#page(query, found, textQuery, () => [...this.#docs.occupiedSlots(keep)]);
  }

  /** How vector candidates are found now. */
  get vectorPlan(): VectorPlan {
    return this.#vectorCandidates.plan;
  }

  /**
   * The steps of tuning how vector candidates are found, when the index has a graph and has grown enough since it was
   * last tuned; undefined otherwise, or while a tuning runs. Each step is one measured search; the plan changes after
   * the last.
   */
  vectorTuning(): Generator<void> | undefined {
    // The graph is measured against the nearest among its own vectors, and scans against the nearest of every code. A
    // graph smaller than the least that has one says too little about the index's vectors (a search of a few hundred is
    // exhaustive).
    const ann = this.#graph.ann;
    if (ann === undefined || this.#tuning || ann.size < EXACT_SEARCH_MAX_VECTORS) return undefined;
    const candidates = this.#vectorCandidates;
    const recentQueries = candidates.recentQueries;
    if (!tuningDue(candidates.plan, this.#docs.passageCount, ann.size, recentQueries.length)) return undefined;
    this.#tuning = true;
    const probe = tuningProbe(ann, { docs: this.#docs, vectors: this.#vectors, graph: this.#graph, recentQueries });
    const tune = function* (index: SearchIndex): Generator<void> {
      try {
        candidates.plan = (yield* tuneVectorPlan(probe, MIN_ANN_CANDIDATES)) ?? candidates.plan;
      } finally {
        index.#tuning = false;
      }
    };
    return tune(this);
  }

  /** How many vectors the graph holds. */
  get graphVectors(): number {
    return this.#graph.held;
  }

  /** How many vectors wait to enter the graph. */
  get pendingGraphInserts(): number {
    return this.#graph.size;
  }

  /** Whether so many vectors wait to enter the graph that they should go in now. */
  get graphInsertsDue(): boolean {
    return this.#graph.due;
  }

  /** Whether the graph is mapped from a kept file, until its first insert loads it into memory. */
  get graphMapped(): boolean {
    return this.#graph.ann?.viewed ?? false;
  }

  /** Adds the pending vectors to the graph (at most `count` of them, the oldest first) in one multi-threaded call. */
  flushGraph(count = Infinity): void {
    this.#graph.flush(count);
  }

  /** The page of `found` that `query` asks for, with the facets of the documents `matches` lists where it asks. */
  #page(
    query: SearchQuery,
    found: Found,
    textQuery: TextQuery | undefined,
    matches: () => ArrayLike<number>,
  ): SearchPage {
    const page: SearchPage = { hits: this.#rank(found, query), total: found.total };
    if (textQuery !== undefined) page.terms = textQuery.terms;
    if (found.textMatches !== undefined) page.textMatches = found.textMatches;
    if (query.facets !== undefined) {
      page.facets = facetCounts(matches(), this.#columns, query.facets);
    }
    return page;
  }

  /**
   * Vector scores (and, in hybrid mode, fused ones) of the candidates, with each document's best passage. A sorted query
   * scores every document that passes the filter, since the sort, not the score, picks its page.
   */
  #vectorSearch(query: SearchQuery, textQuery: TextQuery | undefined, keep?: (slot: number) => boolean): Found {
    const queryVector = query.vector!;
    const wanted = query.offset + query.limit;
    const vectorCandidates = this.#vectorCandidates;
    // Hybrid needs the pool's nearest documents even for a short page.
    const candidates = query.sort !== undefined
      ? undefined
      : vectorCandidates.count(query.mode === "vector" ? wanted : Math.max(HYBRID_POOL, wanted), keep);
    const vector = candidates === undefined
      ? vectorCandidates.docScores(queryVector, this.#docs.passagesOf(this.#docs.occupiedSlots(keep)))
      : vectorCandidates.docScores(queryVector, vectorCandidates.passages(queryVector, candidates));
    const total = candidates === undefined ? vector.slots.length : this.size;
    if (textQuery === undefined) return { ...vector, total };
    let textMatches = 0;
    const fused = this.#text.withScores(textQuery, keep, (text, bm25) => {
      textMatches = text.slots.length;
      const textCount = candidates === undefined
        ? HYBRID_POOL
        : Math.max(HYBRID_TEXT_CANDIDATES, Math.ceil(textMatches * HYBRID_TEXT_SHARE), wanted);
      return this.#fuse(queryVector, vector, text, bm25, textCount);
    });
    return { ...fused, total, textMatches };
  }

  /**
   * Hybrid: every document the vector side scored is a candidate, and so are the `textCount` best BM25 matches (a scan
   * scored them all). Each candidate fuses its own BM25 score, and the scale comes from the pool, so a document scores
   * the same on every page, found by the graph or by a scan.
   */
  #fuse(
    query: Float32Array,
    vector: DocScores,
    text: TextScores,
    bm25: (slot: number) => number,
    textCount: number,
  ): DocScores {
    const ids = this.#docs.ids;
    let maxText = 0;
    for (const score of text.scores) maxText = Math.max(maxText, score);
    const textBest = bestPositions(text.scores, (i) => ids[text.slots[i]!]!, textCount);
    const textSlots = textBest.map((i) => text.slots[i]!);
    const poolText = bestPositions(textBest.map((i) => text.scores[i]!), (i) => ids[textSlots[i]!]!, HYBRID_POOL)
      .map((i) => textSlots[i]!);
    // A map serves for the cosines of the candidates, which are few; BM25, whose matches can be a large share of the
    // index, reads the text side's sums.
    const cosines = new Map(vector.slots.map((slot, i) => [slot, vector.scores[i]!]));
    const extra = this.#vectorCandidates.docScores(
      query,
      this.#docs.passagesOf(textSlots.filter((slot) => !cosines.has(slot))),
    );
    extra.slots.forEach((slot, i) => cosines.set(slot, extra.scores[i]!));
    const poolVector = bestPositions(vector.scores, (i) => ids[vector.slots[i]!]!, HYBRID_POOL)
      .map((i) => vector.slots[i]!);
    const scale = fusionScale([...poolVector, ...poolText].map((slot) => cosines.get(slot)!), maxText);
    const slots = [...vector.slots, ...extra.slots];
    return {
      slots,
      scores: fuseScores(slots.map((slot) => cosines.get(slot)!), slots.map(bm25), scale),
      best: [...vector.best, ...extra.best],
    };
  }

  #rank(found: Found, query: SearchQuery): ScoredDoc[] {
    const { ids, passages } = this.#docs;
    const positions = query.sort === undefined
      ? this.#top(found, query)
      : sortOrder(found, this.#columns, (slot) => ids[slot]!, query.sort, query);
    return positions.map((i) => {
      const slot = found.slots[i]!;
      const hit: ScoredDoc = { id: ids[slot]!, score: found.scores[i]!, slot };
      const passage = found.best?.[i];
      if (passage !== undefined) hit.passage = passages[slot]!.indexOf(passage);
      return hit;
    });
  }

  #top(found: ScoredSlots, page: Page): number[] {
    const ids = this.#docs.ids;
    return rankPage(found.scores, (i) => ids[found.slots[i]!]!, page);
  }

  /** Puts a document in a free slot and its passages in free ones; returns the passage slots (views keep the old). */
  #fill(id: string, doc: IndexedDoc): number[] {
    const slot = this.#docs.freeSlot;
    for (const view of this.#views) view.keep(slot);
    const passages = this.#docs.fill(id, doc, this.#vectors);
    const content = this.#docs.contentOf(slot)!;
    this.#columns.set(slot, content.metadata);
    this.#text.add(slot, content.text);
    return passages;
  }

  /** Removes a slot's document from every part; open views keep the original first, term counts included. */
  #clear(slot: number): void {
    for (const view of this.#views) view.keep(slot);
    this.#text.remove(slot, this.#docs.contentOf(slot, false)!.text);
    this.#graph.remove(this.#docs.passages[slot]!);
    this.#docs.clear(slot);
    this.#columns.set(slot, undefined);
  }
}
