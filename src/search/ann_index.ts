/**
 * Approximate nearest neighbours for large indexes: an HNSW graph (USearch, a native library with prebuilt binaries
 * on npm) over the document vectors, keyed by slot, and compact codes of the same vectors for exact scans (see
 * {@link VectorCodes}). Both only propose candidates; their scores are computed from the stored vectors.
 */
import { exactSearch, Index, MetricKind, ScalarKind } from "usearch";
import type { VectorStore } from "./vector_store.ts";
import { VectorCodes } from "../vector_scan/vector_codes.ts";
import type { CodesParts, SavedCodes } from "../vector_scan/saved_codes.ts";
import { scanThreads } from "../vector_scan/scan_helper.ts";
import { removeQuietly, temporaryGraphPath } from "../segments/graph_files.ts";

/**
 * Graph degree and search breadth when building. USearch's defaults (16, 128, 64) lose most of the true nearest on
 * embeddings that crowd together (a random-weight model's); a degree of 32 keeps recall@10 above 0.95 there, and a
 * graph grown write by write in the server needs the wider query breadth more than a graph built at once. The graph
 * holds int8 copies of the vectors: the same recall as float16, in a smaller graph that searches faster. The query
 * breadth is each search's own (see {@link AnnIndex.search}); the index's is the least, since USearch searches with the
 * larger. The figures are in docs/benchmarks.md.
 */
const CONNECTIVITY = 32;
const EXPANSION_ADD = 128;
const EXPANSION_SEARCH = 16;

/** A graph saved to a temporary file by {@link AnnIndex.saveFile}, and the file's size; whoever saved it removes it. */
export interface GraphFile {
  path: string;
  bytes: number;
}

/** An HNSW index of vectors by slot, under cosine distance. */
export class AnnIndex {
  #index: Index;
  readonly #dims: number;
  readonly #codes: VectorCodes;
  /** The kept file the graph is viewed from (mapped, read-only), until the first change loads it into memory. */
  #viewed: string | undefined;

  constructor(dims: number) {
    this.#dims = dims;
    this.#codes = new VectorCodes(dims);
    this.#index = emptyGraph(dims);
  }

  /** Bytes of memory it holds, estimated: an int8 copy of each vector and its links at every level, and the codes. */
  get bytes(): number {
    return this.size * (this.#dims + CONNECTIVITY * 2 * 4 + 64) + this.#codes.bytes;
  }

  /** Whether it is mapped from a kept file (see {@link view}), until its first change loads it into memory. */
  get viewed(): boolean {
    return this.#viewed !== undefined;
  }

  /** How many vectors it holds. */
  get size(): number {
    return this.#index.size();
  }

  /**
   * Adds the vectors of slots that the graph does not hold, reading them from `vectors`, in one multi-threaded call.
   * Their codes are written apart, by {@link encode}.
   */
  add(slots: number[], vectors: VectorStore): void {
    if (slots.length === 0) return;
    this.#writable();
    const matrix = new Float32Array(slots.length * vectors.dims);
    vectors.forEachRow(slots, (row, i) => matrix.set(row, i * vectors.dims));
    this.#index.add(keysOf(slots), matrix);
  }

  /**
   * Writes the codes of `slots` from `vectors`, so that {@link scan} finds them: as soon as a vector is stored,
   * before it joins the graph, and for a graph restored from a snapshot, which holds no codes.
   */
  encode(slots: readonly number[], vectors: VectorStore): void {
    let highest = -1;
    for (const slot of slots) highest = Math.max(highest, slot);
    this.#codes.reserve(highest + 1);
    vectors.forEachRow(slots, (row, i) => this.#codes.set(slots[i]!, row));
  }

  /** The codes in parts that {@link restoreCodes} takes back once saved (see `VectorCodes.parts`). */
  codesParts(): CodesParts {
    return this.#codes.parts();
  }

  /**
   * Takes back codes that {@link codesParts} gave for the vectors of `slots`, as saved, instead of encoding them; false
   * for codes that do not fit them.
   */
  restoreCodes(saved: SavedCodes, slots: readonly number[]): boolean {
    return this.#codes.restore(saved, slots);
  }

  /** Those of `slots` whose vectors the graph does not hold. */
  missing(slots: number[]): number[] {
    const held = this.#index.contains(keysOf(slots)) as boolean[];
    return slots.filter((_, i) => !held[i]);
  }

  /** Removes the vector of a slot from the graph, if any, and its codes. */
  remove(slot: number): void {
    this.#writable();
    this.#index.remove(BigInt(slot));
    this.removeCodes(slot);
  }

  /** Removes the codes of a slot whose vector never joined the graph. */
  removeCodes(slot: number): void {
    this.#codes.clear(slot);
  }

  /**
   * The slots of (about) the `count` nearest vectors to `query`, nearest first, found by a graph search of `breadth`
   * (at least `count`): wider finds more of the true nearest, and costs more.
   */
  search(query: Float32Array, count: number, breadth: number): number[] {
    const matches = this.#index.search(query, Math.max(count, breadth), 0);
    return Array.from(matches.keys.subarray(0, count), Number);
  }

  /**
   * The slots of the `count` nearest vectors to `query` by a scan of their codes, nearest first: of every code, or
   * with a `depth`, of the codes of the `depth` vectors whose signs agree most with the query's.
   */
  scan(query: Float32Array, count: number, depth?: number): number[] {
    return this.#codes.scan(query, count, depth);
  }

  /** How many threads a scan's passes run on. */
  get scanThreads(): number {
    return scanThreads();
  }

  /** The `count` nearest of `slots` (which hold codes) to `query`, by a scan of their codes alone. */
  scanAmong(query: Float32Array, count: number, slots: readonly number[]): number[] {
    return this.#codes.scanAmong(query, count, slots);
  }

  /**
   * Saves the whole graph to a new temporary file, for a snapshot to read in slices; the caller removes it. USearch
   * saves in one native call, which holds the event loop for as long as the graph takes to write.
   */
  saveFile(): GraphFile {
    const path = temporaryGraphPath();
    this.#index.save(path);
    return { path, bytes: Deno.statSync(path).size };
  }

  /** Restores a graph from a file that {@link saveFile} wrote (or a copy of it); throws on one that does not load. */
  static load(path: string, dims: number): AnnIndex {
    const ann = new AnnIndex(dims);
    ann.#index.load(path);
    return ann;
  }

  /**
   * Restores a graph by viewing a kept file that {@link saveFile} wrote: USearch maps it instead of reading it into
   * memory, so the graph's pages are read as searches touch them, and shared by the processes on the host that view the
   * same file. The first change loads it into memory. The file must never be written; it may be removed.
   */
  static view(path: string, dims: number): AnnIndex {
    const ann = new AnnIndex(dims);
    ann.#index.view(path);
    ann.#viewed = path;
    return ann;
  }

  /**
   * Loads a viewed graph into memory, where it can change, as a new graph that replaces the view once whole (USearch
   * empties a graph before it reads one in): from its file, or, when the file has gone meanwhile (a newer version pruned
   * it) or does not read, from a copy that the mapped graph saves. Throws, with the view still in place, when neither
   * reads.
   */
  #writable(): void {
    const viewed = this.#viewed;
    if (viewed === undefined) return;
    const loaded = emptyGraph(this.#dims);
    try {
      loaded.load(viewed);
    } catch {
      const path = temporaryGraphPath();
      try {
        this.#index.save(path);
        loaded.load(path);
      } finally {
        removeQuietly(path);
      }
    }
    this.#index = loaded;
    this.#viewed = undefined;
  }
}

/** An empty graph of quire's build and search settings. */
function emptyGraph(dims: number): Index {
  return new Index({
    dimensions: dims,
    metric: MetricKind.Cos,
    quantization: ScalarKind.I8,
    connectivity: CONNECTIVITY,
    expansion_add: EXPANSION_ADD,
    expansion_search: EXPANSION_SEARCH,
    multi: false,
  });
}

/**
 * Slots as USearch's 64-bit keys, each written as the low word of a little-endian integer (slots are array indexes, and
 * the hosts quire runs on are little-endian): a BigInt per slot cost a 100,000-vector load's check of its graph most of
 * its time.
 */
function keysOf(slots: readonly number[]): BigUint64Array {
  const keys = new BigUint64Array(slots.length);
  const words = new Uint32Array(keys.buffer);
  for (let i = 0; i < slots.length; i++) words[2 * i] = slots[i]!;
  return keys;
}

/** The `count` of `rows` (float32, `dims` to a row) nearest to `query` by cosine, nearest first (see {@link AnnGraphs}). */
export function nearestRows(rows: Float32Array, dims: number, query: Float32Array, count: number): number[] {
  return Array.from(exactSearch(rows, query, dims, count, MetricKind.Cos, 0).keys, Number);
}
