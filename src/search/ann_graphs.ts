/**
 * Where HNSW graphs come from. USearch is a native addon, so it loads only when the service asks for graphs: a process
 * without FFI (`EMBEDDING_BACKEND=wasm`) never imports it, and its indexes scan every vector exactly.
 */
import type { AnnIndex } from "./ann_index.ts";

/** Makes empty HNSW graphs and restores saved ones. */
export interface AnnGraphs {
  /** An empty graph for vectors of `dims` dimensions. */
  create(dims: number): AnnIndex;
  /** Restores a graph from a file that {@link AnnIndex.saveFile} wrote, or a copy of it. */
  load(path: string, dims: number): AnnIndex;
  /** Restores a graph by mapping a kept file that is never written (see {@link AnnIndex.view}). */
  view(path: string, dims: number): AnnIndex;
  /**
   * The `count` of `rows` (float32, `dims` to a row) nearest to `query` by cosine, nearest first, by an exact native
   * scan on every core: for indexes too small for a graph.
   */
  nearestRows(rows: Float32Array, dims: number, query: Float32Array, count: number): number[];
}

/** Imports USearch (a native addon: it needs FFI) and returns its graphs. */
export async function loadAnnGraphs(): Promise<AnnGraphs> {
  const { AnnIndex, nearestRows } = await import("./ann_index.ts");
  return {
    create: (dims) => new AnnIndex(dims),
    load: (path, dims) => AnnIndex.load(path, dims),
    view: (path, dims) => AnnIndex.view(path, dims),
    nearestRows,
  };
}
