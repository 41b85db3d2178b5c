/**
 * One index's documents in memory, searchable by BM25 (`fulltext`), cosine similarity (`vector`) or both
 * (`hybrid`), with a metadata filter applied before ranking so that it never costs a page its places.
 *
 * Each document lives in a slot, and each of its passages' vectors in a passage slot; slots of deleted documents and
 * passages are reused. A document's vector score is its best passage's. Vector candidates come from an exact scan
 * while the index is small or filtered, and from an HNSW graph of passages once it is large (when the index has a
 * source of graphs); either way scores are cosines of the stored vectors (see `VectorStore`).
 */
import type { AnnGraphs } from "./ann_graphs.ts";
import type { SearchMode } from "./search_mode.ts";
import type { AnnIndex } from "./ann_index.ts";
import type { MetadataFilter } from "./metadata_filter.ts";
import { fuseScores, fusionScale } from "./hybrid_fusion.ts";
import { bestPositions, type Page, rankPage } from "./ranking.ts";
import { type MatchOptions, TextIndex, type TextQuery, type TextScores } from "./text_index.ts";
import { type Analyzer, analyzerFor } from "../fulltext/analyzer.ts";
import { type FacetCounts, facetCounts, type FacetRequest } from "./facet_counts.ts";
import { type SortField, sortOrder } from "./sort_order.ts";
import { MetadataColumns } from "./metadata_columns.ts";
import { type ScoredSlots, type SlotScores, VectorStore } from "./vector_store.ts";
import { SnapshotView } from "./snapshot_view.ts";
import { RECENT_QUERIES, tuneVectorPlan, tuningDue, UNTUNED_PLAN, type VectorPlan } from "./vector_plan.ts";

/**
 * Up to this many passage vectors, vector search scans every one; the HNSW graph is built when an index first grows
 * past it (or loads past it without one), and from then on proposes the candidates of unfiltered queries.
 */
export const EXACT_SEARCH_MAX_VECTORS = 10_000;

/**
 * Graph inserts wait until this many are pending and then go in, in multi-threaded batches, so that a small write
 * rarely pays for them; meanwhile searches scan the pending vectors' int8 codes.
 */
const MAX_PENDING_GRAPH_INSERTS = 512;
/**
 * From this share of the passages waiting for the graph, a search scans every passage's codes instead of the graph and
 * the waiting ones' codes gathered together: at 100,000 of 384 dimensions, gathering 56,000 and scanning them took
 * 12.6 ms, scanning all 5.0 ms, and gathering 20,000 3.9 ms. A bulk load that outruns the graph leaves that many.
 */
const FULL_SCAN_WAITING_SHARE = 0.25;

/**
 * Candidates the graph proposes per hit wanted (at least {@link MIN_ANN_CANDIDATES}), times the passages per
 * document, rescored from the stored vectors.
 */
const ANN_OVERSAMPLING = 4;
const MIN_ANN_CANDIDATES = 200;
/** Hybrid scales its two parts over this many nearest documents and this many best BM25 matches. */
const HYBRID_POOL = 200;
/**
 * Where the graph proposes the nearest documents, hybrid also scores this many best BM25 matches exactly, so that a
 * strong text match with a middling vector is not missed. In the hard case of texts unrelated to vectors
 * (`deno task bench:hybrid`, 100,000 documents), the fused top 10 held 0.974 of the exhaustive fusion's at 500 and
 * 0.923 at 200.
 */
const HYBRID_TEXT_CANDIDATES = 500;
/**
 * And at least this share of its BM25 matches: the fused top 10 are good on both sides without being the best on
 * either, and lie deeper in the text side's order as it grows. At a million documents, where a query matches 278,000,
 * 500 held 0.829 of the exhaustive fusion's top 10 and this share 0.993 (near-random vectors, every code ranked).
 */
const HYBRID_TEXT_SHARE = 1 / 64;

/** A stretch of a document's text, in UTF-16 code units: `text.slice(start, end)`. */
export interface PassageSpan {
  start: number;
  end: number;
}

/** A passage of a document and its vector. */
export interface Passage extends PassageSpan {
  vector: Float32Array;
}

/** A document as the index takes it (and as storage keeps it): its text, metadata, and passages, which cover the text. */
export interface IndexedDoc {
  text: string;
  metadata?: Record<string, unknown>;
  passages: Passage[];
}

/** A change to one document: its new content, or `null` to remove it. */
export interface DocUpdate {
  id: string;
  doc: IndexedDoc | null;
}

/** How {@link SearchIndex.apply} applies a batch of changes. */
export interface ApplyOptions {
  /** The revision the index shows once the changes are in; unchanged when absent (e.g. a load in batches). */
  revision?: number;
  /**
   * Graph inserts wait for {@link SearchIndex.flushGraph} however many pile up: the caller adds them in slices (see
   * {@link SearchIndex.graphInsertsDue}).
   */
  deferGraph?: boolean;
}

/**
 * A query against a {@link SearchIndex}; `vector` is the query embedded with the index's model. Its words match
 * exactly unless `match` allows typos and prefixes.
 */
export interface SearchQuery {
  mode: SearchMode;
  text: string;
  match?: MatchOptions | undefined;
  vector?: Float32Array | undefined;
  filter?: MetadataFilter | undefined;
  /** Orders every match by these metadata fields first, then by score. */
  sort?: SortField[] | undefined;
  /** Counts the values of these metadata fields over every match. */
  facets?: FacetRequest | undefined;
  offset: number;
  limit: number;
}

/** Words match exactly: no typos, no prefixes. */
const EXACT: MatchOptions = { typoTolerance: false, prefix: false };

/** One ranked document, and its best passage by vector score (as an index into its passages) where one was scored. */
export interface ScoredDoc {
  id: string;
  score: number;
  passage?: number;
}

/**
 * One page of ranked documents, the number of documents that matched, the terms the query's words matched (where the
 * mode matched any), and the facet counts asked for.
 */
export interface SearchPage {
  hits: ScoredDoc[];
  total: number;
  terms?: ReadonlySet<string>;
  facets?: FacetCounts;
}

/**
 * What a hit can show of its document. `spans` holds its passages' starts and ends in pairs; it is absent when the
 * document is one passage covering its whole text.
 */
export interface DocContent {
  text: string;
  metadata?: Record<string, unknown>;
  spans?: Uint32Array;
}

/** The state a snapshot restores: documents by slot, their passage slots, and the derived indexes built over them. */
export interface SearchIndexParts {
  revision: number;
  ids: (string | undefined)[];
  contents: (DocContent | undefined)[];
  /** The passage slots of each document slot, in passage order. */
  passages: (number[] | undefined)[];
  vectors: VectorStore;
  text: TextIndex;
  ann?: AnnIndex | undefined;
  /** How the graph side finds vector candidates, as last tuned. */
  plan?: VectorPlan | undefined;
}

/** What a {@link SearchIndex} starts from: any parts a snapshot restored, and where its graphs come from. */
export interface SearchIndexInit extends Partial<SearchIndexParts> {
  revision: number;
  /** The language of its full-text side, when `text` is not given; English by default. */
  language?: string | undefined;
  /** Makes the HNSW graph of a large index; without it every vector search scans exactly. */
  graphs?: AnnGraphs | undefined;
}

/** Vector scores per document slot: the best passage's score, and that passage's slot. */
interface DocScores extends SlotScores {
  best: number[];
}

/** Scored documents of a search, how many matched, and each one's best passage slot where vectors were scored. */
interface Found extends ScoredSlots {
  total: number;
  best?: number[];
}

/** The searchable state of one index at one revision. */
export class SearchIndex {
  #revision: number;
  readonly #ids: (string | undefined)[];
  readonly #contents: (DocContent | undefined)[];
  readonly #passages: (number[] | undefined)[];
  readonly #slots = new Map<string, number>();
  readonly #free: number[] = [];
  /** The document slot of each passage slot; -1 for a free one. */
  readonly #owners: number[] = [];
  readonly #freePassages: number[] = [];
  #passageCount = 0;
  readonly #vectors: VectorStore;
  readonly #text: TextIndex;
  readonly #graphs: AnnGraphs | undefined;
  #ann: AnnIndex | undefined;
  /** Bytes of the documents' ids, texts and metadata, estimated as they come and go. */
  #contentBytes = 0;
  /** Passage slots whose vectors the graph does not hold yet: added in batches, at the next search or once many. */
  readonly #annPending = new Set<number>();
  /** How the graph side finds candidates; tuned from the index's vectors (see {@link vectorTuning}). */
  #plan: VectorPlan = UNTUNED_PLAN;
  #tuning = false;
  /** The latest query vectors that the graph side served, oldest first, to tune on. */
  #recentQueries: Float32Array[] = [];
  /** Open snapshot views, told of each slot before it changes. */
  readonly #views = new Set<SnapshotView>();
  /** Metadata fields that facets and sort have asked for, as columns. */
  readonly #columns = new MetadataColumns((slot) => this.#contents[slot]?.metadata, () => this.#ids.length);

  constructor(init: SearchIndexInit) {
    this.#revision = init.revision;
    this.#ids = init.ids ?? [];
    this.#contents = init.contents ?? [];
    this.#passages = init.passages ?? [];
    this.#vectors = init.vectors ?? new VectorStore();
    this.#text = init.text ?? new TextIndex(analyzerFor(init.language));
    this.#graphs = init.graphs;
    this.#ann = init.graphs === undefined ? undefined : init.ann;
    if (this.#ann !== undefined && init.plan !== undefined) this.#plan = init.plan;
    for (let slot = 0; slot < this.#ids.length; slot++) {
      const id = this.#ids[slot];
      if (id === undefined) this.#free.push(slot);
      else {
        this.#slots.set(id, slot);
        this.#contentBytes += contentBytes(id, this.#contents[slot]!);
        for (const passage of this.#passages[slot]!) {
          while (this.#owners.length <= passage) this.#owners.push(-1);
          this.#owners[passage] = slot;
          this.#passageCount++;
        }
      }
    }
    this.#free.reverse();
    for (let passage = this.#owners.length - 1; passage >= 0; passage--) {
      if (this.#owners[passage] === -1) this.#freePassages.push(passage);
    }
    if (this.#ann !== undefined) {
      // A restored graph holds no int8 codes: they are written from the vectors. It lacks the vectors that were
      // waiting to join it when it was saved: they wait again.
      const passages = [...this.#occupiedPassages()];
      this.#ann.encode(passages, this.#vectors);
      for (const passage of this.#ann.missing(passages)) this.#annPending.add(passage);
    }
    if (this.#ann === undefined && this.#graphs !== undefined && this.#passageCount > EXACT_SEARCH_MAX_VECTORS) {
      // A large index restored without a graph (a snapshot written without USearch): its vectors join a new graph in
      // the background, and until then searches scan their codes.
      this.#ann = this.#graphs.create(this.#vectors.dims);
      this.#awaitGraph(this.#occupiedPassages());
    }
  }

  /** The index revision this state shows. */
  get revision(): number {
    return this.#revision;
  }

  /** Bytes of memory it holds, estimated: documents, vectors, postings and the graph. */
  memoryBytes(): number {
    return this.#contentBytes + this.#vectors.bytes + this.#text.bytes + (this.#ann?.bytes ?? 0) + this.#columns.bytes +
      this.#ids.length * BYTES_PER_SLOT + this.#owners.length * BYTES_PER_PASSAGE;
  }

  /** How many documents it holds. */
  get size(): number {
    return this.#slots.size;
  }

  /** How many passages (and so vectors) it holds. */
  get passageCount(): number {
    return this.#passageCount;
  }

  /**
   * A view of the index as it stands now, which later changes do not alter, for a snapshot to read in slices; the graph
   * is saved as it stands, without the vectors waiting to join it. Close the view when done: until then, each change
   * copies the documents it touches.
   */
  openSnapshotView(): SnapshotView {
    const view = new SnapshotView({
      revision: this.#revision,
      ids: this.#ids,
      contents: this.#contents,
      passages: this.#passages,
      vectors: this.#vectors,
      text: this.#text,
      graph: this.#ann?.saveFile(),
      plan: this.#plan,
    }, () => this.#views.delete(view));
    this.#views.add(view);
    return view;
  }

  /** Applies a write's document changes: each one replaces or removes one document. */
  apply(changes: Iterable<DocUpdate>, options: ApplyOptions = {}): void {
    const added: number[] = [];
    for (const { id, doc } of changes) {
      const slot = this.#slots.get(id);
      if (slot !== undefined) this.#clear(id, slot);
      if (doc !== null) added.push(...this.#fill(id, doc));
    }
    if (this.#ann !== undefined) {
      this.#awaitGraph(added);
    } else if (this.#graphs !== undefined && this.#passageCount > EXACT_SEARCH_MAX_VECTORS) {
      // The new graph's vectors all wait to join it, as a restored index's do.
      this.#ann = this.#graphs.create(this.#vectors.dims);
      this.#awaitGraph(this.#occupiedPassages());
    }
    if (!options.deferGraph && this.graphInsertsDue) this.flushGraph();
    if (options.revision !== undefined) this.#revision = options.revision;
  }

  /** The text and metadata of a document. */
  content(id: string): DocContent | undefined {
    const slot = this.#slots.get(id);
    return slot === undefined ? undefined : this.#contents[slot];
  }

  /** The spans of a document's passages, in order. */
  passageSpans(id: string): PassageSpan[] {
    const content = this.content(id);
    if (content === undefined) return [];
    const spans = content.spans;
    if (spans === undefined) return [{ start: 0, end: content.text.length }];
    return Array.from({ length: spans.length / 2 }, (_, i) => ({ start: spans[2 * i]!, end: spans[2 * i + 1]! }));
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
    const keep = filter === undefined ? undefined : (slot: number) => filter(this.#contents[slot]!.metadata);
    const textQuery = query.mode === "vector" ? undefined : this.#text.query(query.text, query.match ?? EXACT);
    if (query.mode !== "fulltext") {
      if (query.vector === undefined) throw new TypeError(`A "${query.mode}" search needs the query vector`);
      this.#vectors.checkDims(query.vector);
    }
    if (query.mode === "fulltext") {
      // The page is cut while the text side's arrays stand: at a million documents a query matches 280,000, and
      // copying their slots and scores cost more than ranking them.
      return this.#text.withScores(
        textQuery!,
        keep,
        (found) => this.#page(query, { ...found, total: found.slots.length }, textQuery, () => found.slots),
      );
    }
    // Every document matches in vector and hybrid modes (they rank, they exclude nothing): all that pass the filter.
    const found = this.#vectorSearch(query, textQuery, keep);
    return this.#page(query, found, textQuery, () => [...this.#occupiedSlots(keep)]);
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
    if (query.facets !== undefined) {
      page.facets = facetCounts(matches(), this.#columns, query.facets);
    }
    return page;
  }

  /**
   * Vector scores (and, in hybrid mode, fused ones) of the candidates, with each document's best passage. A sorted
   * query scores every document that passes the filter, since the sort, not the score, picks its page.
   */
  #vectorSearch(query: SearchQuery, textQuery: TextQuery | undefined, keep?: (slot: number) => boolean): Found {
    const queryVector = query.vector!;
    const wanted = query.offset + query.limit;
    // Hybrid needs the pool's nearest documents even for a short page.
    const candidates = query.sort !== undefined
      ? undefined
      : this.#candidateCount(query.mode === "vector" ? wanted : Math.max(HYBRID_POOL, wanted), keep);
    const vector = candidates === undefined
      ? this.#docScores(queryVector, this.#passagesOf(this.#occupiedSlots(keep)))
      : this.#docScores(queryVector, this.#candidatePassages(queryVector, candidates));
    const total = candidates === undefined ? vector.slots.length : this.size;
    if (textQuery === undefined) return { ...vector, total };
    const fused = this.#text.withScores(textQuery, keep, (text, bm25) => {
      const matches = text.slots.length;
      const textCount = candidates === undefined
        ? HYBRID_POOL
        : Math.max(HYBRID_TEXT_CANDIDATES, Math.ceil(matches * HYBRID_TEXT_SHARE), wanted);
      return this.#fuse(queryVector, vector, text, bm25, textCount);
    });
    return { ...fused, total };
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
    let maxText = 0;
    for (const score of text.scores) maxText = Math.max(maxText, score);
    const textBest = bestPositions(text.scores, (i) => this.#ids[text.slots[i]!]!, textCount);
    const textSlots = textBest.map((i) => text.slots[i]!);
    const poolText = bestPositions(textBest.map((i) => text.scores[i]!), (i) => this.#ids[textSlots[i]!]!, HYBRID_POOL)
      .map((i) => textSlots[i]!);
    // A map serves for the cosines of about 1,300 candidates; BM25, with 30,000 matches, reads the text side's sums.
    const cosines = new Map(vector.slots.map((slot, i) => [slot, vector.scores[i]!]));
    const extra = this.#docScores(query, this.#passagesOf(textSlots.filter((slot) => !cosines.has(slot))));
    extra.slots.forEach((slot, i) => cosines.set(slot, extra.scores[i]!));
    const poolVector = bestPositions(vector.scores, (i) => this.#ids[vector.slots[i]!]!, HYBRID_POOL)
      .map((i) => vector.slots[i]!);
    const scale = fusionScale([...poolVector, ...poolText].map((slot) => cosines.get(slot)!), maxText);
    const slots = [...vector.slots, ...extra.slots];
    return {
      slots,
      scores: fuseScores(slots.map((slot) => cosines.get(slot)!), slots.map(bm25), scale),
      best: [...vector.best, ...extra.best],
    };
  }

  /**
   * How many passages to ask the graph (or a small index's native scan) for to find the `wanted` nearest documents, or
   * undefined to score every document: a filtered index is scored whole, and so is a query that reaches too deep for
   * candidates to serve, or a small index without the native scan (`EMBEDDING_BACKEND=wasm`).
   */
  #candidateCount(wanted: number, keep?: (slot: number) => boolean): number | undefined {
    const perDoc = Math.ceil(this.#passageCount / Math.max(1, this.size));
    const candidates = Math.max(MIN_ANN_CANDIDATES, wanted * ANN_OVERSAMPLING) * perDoc;
    const useCandidates = keep === undefined && this.#graphs !== undefined && candidates < this.#passageCount / 2;
    return useCandidates ? candidates : undefined;
  }

  /**
   * The nearest passage candidates: from the graph in an index large enough to have one; otherwise from a native exact
   * scan of the float32 vectors on every core (a search of 10,000 vectors of 384 dimensions took 1.2 ms, against 6.0 ms
   * scoring every one in JavaScript).
   */
  #nearestPassages(query: Float32Array, count: number): number[] {
    if (this.#ann !== undefined && this.#passageCount > EXACT_SEARCH_MAX_VECTORS) {
      return this.#graphCandidates(query, count);
    }
    this.#vectors.checkDims(query);
    const rows = this.#owners.length;
    // Free passage slots may hold old vectors: as many more are asked for, and then left out.
    const found = this.#graphs!.nearestRows(
      this.#vectors.rows(rows),
      this.#vectors.dims,
      query,
      Math.min(count + this.#freePassages.length, rows),
    );
    return found.filter((passage) => this.#owners[passage]! >= 0);
  }

  /**
   * The nearest passage candidates as the plan finds them. A scan of the codes covers the passages still waiting to
   * enter the graph; a graph search adds the nearest of those by a scan of their codes alone, unless so many wait that
   * scanning every code costs less (see {@link FULL_SCAN_WAITING_SHARE}).
   */
  #graphCandidates(query: Float32Array, count: number): number[] {
    this.#recentQueries.push(query.slice());
    if (this.#recentQueries.length > RECENT_QUERIES) this.#recentQueries.shift();
    const ann = this.#ann!;
    const scan = this.#plan.scan || this.#annPending.size >= this.#passageCount * FULL_SCAN_WAITING_SHARE;
    const found = scan
      ? ann.scan(query, count, this.#plan.scan ? this.#plan.depth : undefined)
      : ann.search(query, count, this.#plan.breadth);
    // Only passages that a document still owns are candidates.
    const candidates = found.filter((passage) => this.#owners[passage]! >= 0);
    if (!scan && this.#annPending.size > 0) {
      candidates.push(...ann.scanAmong(query, count, [...this.#annPending]));
    }
    return candidates;
  }

  /** How vector candidates are found now. */
  get vectorPlan(): VectorPlan {
    return this.#plan;
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
    if (this.#ann === undefined || this.#tuning || this.#ann.size < EXACT_SEARCH_MAX_VECTORS) return undefined;
    if (!tuningDue(this.#plan, this.#passageCount, this.#ann.size, this.#recentQueries.length)) return undefined;
    this.#tuning = true;
    const ann = this.#ann;
    const probe = {
      passages: this.#passageCount,
      held: ann.size,
      sample: (count: number) => this.#samplePassages(count),
      recent: () => [...this.#recentQueries],
      vector: (passage: number) => this.#vectors.row(passage),
      graph: (query: Float32Array, count: number, breadth: number) => ann.search(query, count, breadth),
      scan: (query: Float32Array, count: number, depth?: number) => ann.scan(query, count, depth),
      scanThreads: ann.scanThreads,
      inGraph: (passage: number) => !this.#annPending.has(passage),
      rank: (query: Float32Array, candidates: number[], self: number) => {
        const scored = this.#vectors.scores(query, candidates.filter((p) => p !== self && this.#owners[p]! >= 0));
        return scored.slots.map((slot, i) => [slot, scored.scores[i]!] as const).sort((a, b) => b[1] - a[1])
          .map(([slot]) => slot);
      },
    };
    const tune = function* (index: SearchIndex): Generator<void> {
      try {
        index.#plan = (yield* tuneVectorPlan(probe, MIN_ANN_CANDIDATES)) ?? index.#plan;
      } finally {
        index.#tuning = false;
      }
    };
    return tune(this);
  }

  /** `count` distinct passages in the graph, drawn with a generator seeded by the index's size (so, repeatably). */
  #samplePassages(count: number): number[] {
    const inGraph = [...this.#occupiedPassages()].filter((passage) => !this.#annPending.has(passage));
    let seed = inGraph.length;
    const picked = new Set<number>();
    while (picked.size < Math.min(count, inGraph.length)) {
      // mulberry32
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      picked.add(inGraph[(((t ^ (t >>> 14)) >>> 0) / 4294967296 * inGraph.length) | 0]!);
    }
    return [...picked];
  }

  /** Whether every document is one passage (each has at least one). */
  get #onePassageEach(): boolean {
    return this.#passageCount === this.size;
  }

  /**
   * The passages to score for the `count` nearest candidates: where every document is one passage, the candidates
   * themselves; otherwise every passage of the documents that own them (see {@link #ownersOf}).
   */
  #candidatePassages(query: Float32Array, count: number): number[] {
    const nearest = this.#nearestPassages(query, count);
    return this.#onePassageEach ? nearest : this.#passagesOf(this.#ownersOf(nearest));
  }

  /** Scores passages (each one at most once) and keeps each document's best. */
  #docScores(query: Float32Array, passages: number[]): DocScores {
    const found = this.#vectors.scores(query, passages);
    if (this.#onePassageEach) {
      // Each passage scored is a document of its own.
      return { slots: found.slots.map((passage) => this.#owners[passage]!), scores: found.scores, best: found.slots };
    }
    const result: DocScores = { slots: [], scores: [], best: [] };
    const at = new Map<number, number>();
    found.slots.forEach((passage, i) => {
      const slot = this.#owners[passage]!;
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
   * The documents that own `passages`. The graph proposes passages, but every passage of a proposed document is then
   * scored, so that its score is its best passage's whether or not the graph found that one.
   */
  #ownersOf(passages: Iterable<number>): Set<number> {
    const owners = new Set<number>();
    for (const passage of passages) owners.add(this.#owners[passage]!);
    return owners;
  }

  /** The passages of the documents in `slots`: an array, since a generator's steps cost a search 0.2 ms. */
  #passagesOf(slots: Iterable<number>): number[] {
    const passages: number[] = [];
    for (const slot of slots) {
      for (const passage of this.#passages[slot]!) passages.push(passage);
    }
    return passages;
  }

  /** How many vectors the graph holds. */
  get graphVectors(): number {
    return this.#ann?.size ?? 0;
  }

  /** How many vectors wait to enter the graph. */
  get pendingGraphInserts(): number {
    return this.#annPending.size;
  }

  /** Whether so many vectors wait to enter the graph that they should go in now. */
  get graphInsertsDue(): boolean {
    return this.#ann !== undefined && this.#annPending.size >= MAX_PENDING_GRAPH_INSERTS;
  }

  /** Makes passages wait to join the graph: their codes are written now, so that a scan finds them meanwhile. */
  #awaitGraph(passages: Iterable<number>): void {
    const waiting = [...passages];
    for (const passage of waiting) this.#annPending.add(passage);
    this.#ann!.encode(waiting, this.#vectors);
  }

  /** Adds the pending vectors to the graph (at most `count` of them, the oldest first) in one multi-threaded call. */
  flushGraph(count = Infinity): void {
    if (this.#ann === undefined || this.#annPending.size === 0) return;
    const passages: number[] = [];
    for (const passage of this.#annPending) {
      if (passages.length >= count) break;
      passages.push(passage);
    }
    this.#ann.add(passages, this.#vectors);
    for (const passage of passages) this.#annPending.delete(passage);
  }

  #rank(found: Found, query: SearchQuery): ScoredDoc[] {
    const positions = query.sort === undefined
      ? this.#top(found, query)
      : sortOrder(found, this.#columns, (slot) => this.#ids[slot]!, query.sort, query);
    return positions.map((i) => {
      const slot = found.slots[i]!;
      const hit: ScoredDoc = { id: this.#ids[slot]!, score: found.scores[i]! };
      const passage = found.best?.[i];
      if (passage !== undefined) hit.passage = this.#passages[slot]!.indexOf(passage);
      return hit;
    });
  }

  #top(found: ScoredSlots, page: Page): number[] {
    return rankPage(found.scores, (i) => this.#ids[found.slots[i]!]!, page);
  }

  *#occupiedSlots(keep?: (slot: number) => boolean): Generator<number> {
    for (let slot = 0; slot < this.#ids.length; slot++) {
      if (this.#ids[slot] !== undefined && (keep === undefined || keep(slot))) yield slot;
    }
  }

  *#occupiedPassages(): Generator<number> {
    for (let passage = 0; passage < this.#owners.length; passage++) {
      if (this.#owners[passage] !== -1) yield passage;
    }
  }

  /** Puts a document in a free slot and its passages in free passage slots; returns the passage slots. */
  #fill(id: string, doc: IndexedDoc): number[] {
    const slot = this.#free.pop() ?? this.#ids.length;
    for (const view of this.#views) view.keep(slot);
    const content: DocContent = { text: doc.text };
    if (doc.metadata !== undefined) content.metadata = doc.metadata;
    const whole = doc.passages.length === 1 && doc.passages[0]!.start === 0 && doc.passages[0]!.end === doc.text.length;
    if (!whole) content.spans = Uint32Array.from(doc.passages.flatMap(({ start, end }) => [start, end]));
    const passages = doc.passages.map(({ vector }) => {
      const passage = this.#freePassages.pop() ?? this.#owners.length;
      this.#owners[passage] = slot;
      this.#vectors.set(passage, vector);
      return passage;
    });
    this.#passageCount += passages.length;
    this.#ids[slot] = id;
    this.#contents[slot] = content;
    this.#passages[slot] = passages;
    this.#slots.set(id, slot);
    this.#columns.set(slot, content.metadata);
    this.#text.add(slot, content.text);
    this.#contentBytes += contentBytes(id, content);
    return passages;
  }

  #clear(id: string, slot: number): void {
    for (const view of this.#views) view.keep(slot);
    this.#text.remove(slot, this.#contents[slot]!.text);
    this.#contentBytes -= contentBytes(id, this.#contents[slot]!);
    for (const passage of this.#passages[slot]!) {
      if (this.#annPending.delete(passage)) this.#ann!.removeCodes(passage);
      else this.#ann?.remove(passage);
      this.#owners[passage] = -1;
      this.#freePassages.push(passage);
    }
    this.#passageCount -= this.#passages[slot]!.length;
    this.#ids[slot] = undefined;
    this.#contents[slot] = undefined;
    this.#columns.set(slot, undefined);
    this.#passages[slot] = undefined;
    this.#slots.delete(id);
    this.#free.push(slot);
  }
}

/** Memory per slot beyond its document: its place in the arrays, the id map and its list of passages. */
const BYTES_PER_SLOT = 96;
/** Memory per passage slot beyond its vector: its owner and its place in the document's list. */
const BYTES_PER_PASSAGE = 16;

/** The estimated memory of a document's id, text and metadata (UTF-16 strings, metadata as JSON). */
function contentBytes(id: string, content: DocContent): number {
  const metadata = content.metadata === undefined ? 0 : JSON.stringify(content.metadata).length;
  return 2 * (id.length + content.text.length + metadata) + 96 + (content.spans?.byteLength ?? 0);
}
