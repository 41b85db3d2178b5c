/**
 * One index's documents in memory, searchable by BM25 (`fulltext`), cosine similarity (`vector`) or both
 * (`hybrid`), with a metadata filter applied before ranking so that it never costs a page its places.
 *
 * Each document lives in a slot; slots of deleted documents are reused. Vector candidates come from an exact scan
 * while the index is small or filtered, and from an HNSW graph once it is large (when the index has a source of
 * graphs); either way scores are exact cosines.
 */
import type { AnnGraphs } from "./ann_graphs.ts";
import type { SearchMode } from "./search_mode.ts";
import type { AnnIndex } from "./ann_index.ts";
import type { MetadataFilter } from "./metadata_filter.ts";
import { fuseScores, fusionScale } from "./hybrid_fusion.ts";
import { type Page, rankPage } from "./ranking.ts";
import { TextIndex } from "./text_index.ts";
import { type SlotScores, VectorStore } from "./vector_store.ts";

/**
 * Up to this many documents, vector search scans every vector; the HNSW graph is built when an index first grows past
 * it (or loads past it without one), and from then on proposes the candidates of unfiltered queries.
 */
export const EXACT_SEARCH_MAX_DOCS = 10_000;

/**
 * Graph inserts wait until this many are pending and then go in as one multi-threaded batch, so that a small write
 * rarely pays for them; meanwhile searches scan the pending vectors exactly.
 */
const MAX_PENDING_GRAPH_INSERTS = 512;

/** Candidates the graph proposes per hit wanted (at least {@link MIN_ANN_CANDIDATES}), rescored exactly. */
const ANN_OVERSAMPLING = 4;
const MIN_ANN_CANDIDATES = 200;
/** Hybrid scales its two parts over this many nearest documents and this many best BM25 matches. */
const HYBRID_POOL = 200;
/**
 * Where the graph proposes the nearest documents, hybrid also scores this many best BM25 matches exactly, so that a
 * strong text match with a middling vector is not missed. More finds more of an exact scan's hits (in the hard case of
 * texts unrelated to vectors: 64 of 100 at 500, 89 at 1,000), but 1,000 put the benchmark's hybrid p50 at 100 ms.
 */
const HYBRID_TEXT_CANDIDATES = 500;

/** A change to one document: its new text, metadata and vector, or `null` to remove it. */
export interface DocUpdate {
  id: string;
  doc: { text: string; metadata?: Record<string, unknown>; vector: Float32Array } | null;
}

/** How {@link SearchIndex.apply} applies a batch of changes. */
export interface ApplyOptions {
  /** The revision the index shows once the changes are in; unchanged when absent (e.g. a load in batches). */
  revision?: number;
  /** Graph inserts wait for {@link SearchIndex.flushGraph} however many pile up (a load replaying the log). */
  deferGraph?: boolean;
}

/** A query against a {@link SearchIndex}; `vector` is the query embedded with the index's model. */
export interface SearchQuery {
  mode: SearchMode;
  text: string;
  vector?: Float32Array;
  filter?: MetadataFilter;
  offset: number;
  limit: number;
}

/** One ranked document. */
export interface ScoredDoc {
  id: string;
  score: number;
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

/** The state a snapshot restores: documents by slot, and the derived indexes built over them. */
export interface SearchIndexParts {
  revision: number;
  ids: (string | undefined)[];
  contents: (DocContent | undefined)[];
  vectors: VectorStore;
  text: TextIndex;
  ann?: AnnIndex;
}

/** What a {@link SearchIndex} starts from: any parts a snapshot restored, and where its graphs come from. */
export interface SearchIndexInit extends Partial<SearchIndexParts> {
  revision: number;
  /** Makes the HNSW graph of a large index; without it every vector search scans exactly. */
  graphs?: AnnGraphs;
}

/** The searchable state of one index at one revision. */
export class SearchIndex {
  #revision: number;
  readonly #ids: (string | undefined)[];
  readonly #contents: (DocContent | undefined)[];
  readonly #slots = new Map<string, number>();
  readonly #free: number[] = [];
  readonly #vectors: VectorStore;
  readonly #text: TextIndex;
  readonly #graphs: AnnGraphs | undefined;
  #ann: AnnIndex | undefined;
  /** Bytes of the documents' ids, texts and metadata, estimated as they come and go. */
  #contentBytes = 0;
  /** Slots whose vectors the graph does not hold yet: added in batches, at the next search or once there are many. */
  readonly #annPending = new Set<number>();

  constructor(init: SearchIndexInit) {
    this.#revision = init.revision;
    this.#ids = init.ids ?? [];
    this.#contents = init.contents ?? [];
    this.#vectors = init.vectors ?? new VectorStore();
    this.#text = init.text ?? new TextIndex();
    this.#graphs = init.graphs;
    this.#ann = init.graphs === undefined ? undefined : init.ann;
    for (let slot = 0; slot < this.#ids.length; slot++) {
      const id = this.#ids[slot];
      if (id === undefined) this.#free.push(slot);
      else {
        this.#slots.set(id, slot);
        this.#contentBytes += contentBytes(id, this.#contents[slot]!);
      }
    }
    this.#free.reverse();
    if (this.#ann === undefined && this.#graphs !== undefined && this.size > EXACT_SEARCH_MAX_DOCS) {
      // A large index restored without a graph (a snapshot written without USearch): its vectors join a new graph at
      // the next flush, and until then searches scan them exactly, as they do any pending vector.
      this.#ann = this.#graphs.create(this.#vectors.dims);
      for (const slot of this.#occupiedSlots()) this.#annPending.add(slot);
    }
  }

  /** The index revision this state shows. */
  get revision(): number {
    return this.#revision;
  }

  /** Bytes of memory it holds, estimated: documents, vectors, postings and the graph. */
  memoryBytes(): number {
    return this.#contentBytes + this.#vectors.bytes + this.#text.bytes + (this.#ann?.bytes ?? 0) +
      this.#ids.length * BYTES_PER_SLOT;
  }

  /** How many documents it holds. */
  get size(): number {
    return this.#slots.size;
  }

  /** The parts a snapshot stores. */
  parts(): SearchIndexParts {
    this.flushGraph();
    return {
      revision: this.#revision,
      ids: this.#ids,
      contents: this.#contents,
      vectors: this.#vectors,
      text: this.#text,
      ann: this.#ann,
    };
  }

  /** Applies a write's document changes: each one replaces or removes one document. */
  apply(changes: Iterable<DocUpdate>, options: ApplyOptions = {}): void {
    const added: number[] = [];
    for (const { id, doc } of changes) {
      const slot = this.#slots.get(id);
      if (slot !== undefined) this.#clear(id, slot);
      if (doc === null) continue;
      const content: DocContent = doc.metadata === undefined
        ? { text: doc.text }
        : { text: doc.text, metadata: doc.metadata };
      added.push(this.#fill(id, content, doc.vector));
    }
    if (this.#ann !== undefined) {
      for (const slot of added) this.#annPending.add(slot);
      if (!options.deferGraph && this.#annPending.size >= MAX_PENDING_GRAPH_INSERTS) this.flushGraph();
    } else if (this.#graphs !== undefined && this.size > EXACT_SEARCH_MAX_DOCS) {
      this.#ann = this.#graphs.create(this.#vectors.dims);
      this.#ann.add([...this.#occupiedSlots()], this.#vectors);
    }
    if (options.revision !== undefined) this.#revision = options.revision;
  }

  /** The text and metadata of a document. */
  content(id: string): DocContent | undefined {
    const slot = this.#slots.get(id);
    return slot === undefined ? undefined : this.#contents[slot];
  }

  /** Finds, filters and ranks documents; `vector` and `hybrid` queries need `query.vector`. */
  search(query: SearchQuery): SearchPage {
    const { filter } = query;
    const keep = filter === undefined ? undefined : (slot: number) => filter(this.#contents[slot]!.metadata);
    if (query.mode === "fulltext") {
      const found = this.#text.scores(query.text, keep);
      return { hits: this.#rank(found, query), total: found.slots.length };
    }
    if (query.vector === undefined) throw new TypeError(`A "${query.mode}" search needs the query vector`);
    this.#vectors.checkDims(query.vector);
    const wanted = query.offset + query.limit;
    // Hybrid needs the pool's nearest documents even for a short page.
    const candidates = this.#candidateCount(query.mode === "vector" ? wanted : Math.max(HYBRID_POOL, wanted), keep);
    const vector = candidates === undefined
      ? this.#vectors.scores(query.vector, this.#occupiedSlots(keep))
      : this.#vectors.scores(query.vector, this.#graphCandidates(query.vector, candidates));
    const total = candidates === undefined ? vector.slots.length : this.size;
    if (query.mode === "vector") return { hits: this.#rank(vector, query), total };
    // Hybrid: every scored document is a candidate, and so are the best BM25 matches (a scan scored them all). The
    // scale comes from the pool, so a document scores the same on every page, found by the graph or by a scan.
    const textScores = this.#text.scores(query.text, keep);
    // Best first, so that the pool's best matches are its head.
    const text = this.#best(
      textScores,
      candidates === undefined ? HYBRID_POOL : Math.max(HYBRID_TEXT_CANDIDATES, wanted),
    );
    const cosines = new Map(vector.slots.map((slot, i) => [slot, vector.scores[i]!]));
    const missing = text.slots.filter((slot) => !cosines.has(slot));
    const extra = this.#vectors.scores(query.vector, missing);
    extra.slots.forEach((slot, i) => cosines.set(slot, extra.scores[i]!));
    const poolText = text.slots.slice(0, HYBRID_POOL);
    const pool = [...this.#best(vector, HYBRID_POOL).slots, ...poolText].map((slot) => cosines.get(slot)!);
    const scale = fusionScale(pool, text.scores[0] ?? 0);
    const ranked = candidates === undefined ? textScores : text;
    const bm25 = new Map(ranked.slots.map((slot, i) => [slot, ranked.scores[i]!]));
    const slots = [...cosines.keys()];
    const fused = fuseScores(slots.map((slot) => cosines.get(slot)!), slots.map((slot) => bm25.get(slot) ?? 0), scale);
    return { hits: this.#rank({ slots, scores: fused }, query), total };
  }

  /**
   * How many candidates to ask the graph for to find the `wanted` nearest, or undefined to scan exactly: a small or
   * filtered index is scanned, and so is a query that reaches too deep for the graph to serve.
   */
  #candidateCount(wanted: number, keep?: (slot: number) => boolean): number | undefined {
    const candidates = Math.max(MIN_ANN_CANDIDATES, wanted * ANN_OVERSAMPLING);
    const useGraph = keep === undefined && this.#ann !== undefined && this.size > EXACT_SEARCH_MAX_DOCS &&
      candidates < this.size / 2;
    return useGraph ? candidates : undefined;
  }

  /** The graph's nearest candidates and every vector still waiting to enter the graph. */
  #graphCandidates(query: Float32Array, count: number): number[] {
    const candidates = this.#ann!.search(query, count);
    for (const slot of this.#annPending) candidates.push(slot);
    return candidates;
  }

  /** How many vectors wait to enter the graph. */
  get pendingGraphInserts(): number {
    return this.#annPending.size;
  }

  /** Adds the pending vectors to the graph in one multi-threaded call. */
  flushGraph(): void {
    if (this.#ann === undefined || this.#annPending.size === 0) return;
    this.#ann.add([...this.#annPending], this.#vectors);
    this.#annPending.clear();
  }

  #rank(found: SlotScores, query: SearchQuery): ScoredDoc[] {
    return this.#top(found, query).map((i) => ({ id: this.#ids[found.slots[i]!]!, score: found.scores[i]! }));
  }

  /** The `count` best of `found`. */
  #best(found: SlotScores, count: number): SlotScores {
    const best = this.#top(found, { offset: 0, limit: count });
    return { slots: best.map((i) => found.slots[i]!), scores: best.map((i) => found.scores[i]!) };
  }

  #top(found: SlotScores, page: Page): number[] {
    return rankPage(found.scores, (i) => this.#ids[found.slots[i]!]!, page);
  }

  *#occupiedSlots(keep?: (slot: number) => boolean): Generator<number> {
    for (let slot = 0; slot < this.#ids.length; slot++) {
      if (this.#ids[slot] !== undefined && (keep === undefined || keep(slot))) yield slot;
    }
  }

  #fill(id: string, content: DocContent, vector: Float32Array): number {
    const slot = this.#free.pop() ?? this.#ids.length;
    this.#ids[slot] = id;
    this.#contents[slot] = content;
    this.#slots.set(id, slot);
    this.#vectors.set(slot, vector);
    this.#text.add(slot, content.text);
    this.#contentBytes += contentBytes(id, content);
    return slot;
  }

  #clear(id: string, slot: number): void {
    this.#text.remove(slot, this.#contents[slot]!.text);
    this.#contentBytes -= contentBytes(id, this.#contents[slot]!);
    if (!this.#annPending.delete(slot)) this.#ann?.remove(slot);
    this.#ids[slot] = undefined;
    this.#contents[slot] = undefined;
    this.#slots.delete(id);
    this.#free.push(slot);
  }
}

/** Memory per slot beyond its document: its place in the arrays and the id map. */
const BYTES_PER_SLOT = 64;

/** The estimated memory of a document's id, text and metadata (UTF-16 strings, metadata as JSON). */
function contentBytes(id: string, content: DocContent): number {
  const metadata = content.metadata === undefined ? 0 : JSON.stringify(content.metadata).length;
  return 2 * (id.length + content.text.length + metadata) + 96;
}
