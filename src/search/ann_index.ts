/**
 * Approximate nearest neighbours for large indexes: an HNSW graph (USearch, a native library with prebuilt binaries
 * on npm) over the document vectors, keyed by slot. It only proposes candidates; their scores are computed exactly
 * from the float32 vectors.
 */
import { Index, MetricKind, ScalarKind } from "usearch";
import type { VectorStore } from "./vector_store.ts";

/**
 * Graph degree, and search breadth when building and when querying. On the benchmark's 100,000 embeddings (a
 * random-weight model, whose vectors crowd together), USearch's defaults (16, 128, 64) gave recall@10 of about 0.6,
 * (16, 128, 1024) 0.93, and (32, 128, 2048) 0.975 at about 3.5 ms per query; a graph grown write by write in the
 * server needs the wider query breadth more than a graph built at once. The graph holds int8 copies of the vectors:
 * the same recall as float16 there (0.977 against 0.976), a 63 MB graph instead of 100 MB, and 2.6 ms per query.
 */
const CONNECTIVITY = 32;
const EXPANSION_ADD = 128;
const EXPANSION_SEARCH = 2048;

/** An HNSW index of vectors by slot, under cosine distance. */
export class AnnIndex {
  readonly #index: Index;
  readonly #dims: number;

  constructor(dims: number) {
    this.#dims = dims;
    this.#index = new Index({
      dimensions: dims,
      metric: MetricKind.Cos,
      quantization: ScalarKind.I8,
      connectivity: CONNECTIVITY,
      expansion_add: EXPANSION_ADD,
      expansion_search: EXPANSION_SEARCH,
      multi: false,
    });
  }

  /** Bytes of memory it holds, estimated: an int8 copy of each vector and its links at every level. */
  get bytes(): number {
    return this.size * (this.#dims + CONNECTIVITY * 2 * 4 + 64);
  }

  /** How many vectors it holds. */
  get size(): number {
    return this.#index.size();
  }

  /** Adds the vectors of slots that hold none, reading them from `vectors`, in one multi-threaded call. */
  add(slots: number[], vectors: VectorStore): void {
    if (slots.length === 0) return;
    const matrix = new Float32Array(slots.length * vectors.dims);
    slots.forEach((slot, i) => matrix.set(vectors.row(slot), i * vectors.dims));
    this.#index.add(BigUint64Array.from(slots, BigInt), matrix);
  }

  /** Removes the vector of a slot, if any. */
  remove(slot: number): void {
    this.#index.remove(BigInt(slot));
  }

  /** The slots of (about) the `count` nearest vectors to `query`, nearest first. */
  search(query: Float32Array, count: number): number[] {
    const matches = this.#index.search(query, count, 0);
    return Array.from(matches.keys, Number);
  }

  /** The whole graph as bytes, for a snapshot. */
  save(): Uint8Array {
    const path = graphFile();
    try {
      this.#index.save(path);
      return Deno.readFileSync(path);
    } finally {
      Deno.removeSync(path);
    }
  }

  /** Restores a graph that {@link save} wrote. */
  static load(bytes: Uint8Array, dims: number): AnnIndex {
    const ann = new AnnIndex(dims);
    const path = graphFile();
    try {
      Deno.writeFileSync(path, bytes);
      ann.#index.load(path);
      return ann;
    } finally {
      Deno.removeSync(path);
    }
  }
}

/**
 * A temporary file to pass a graph through (USearch saves and loads files, not buffers): in memory-backed /dev/shm
 * where there is one, since writing a 100 MB graph to disk took half a second of a cold start.
 */
function graphFile(): string {
  let dir: string | undefined;
  try {
    if (Deno.statSync("/dev/shm").isDirectory) dir = "/dev/shm";
  } catch {
    // No /dev/shm: the system's temporary directory.
  }
  return Deno.makeTempFileSync({ prefix: "quire-ann-", dir });
}
