/**
 * Document vectors, one row per slot, with cosine similarity. A small store keeps them in one flat `Float32Array`, and
 * its cosines are exact; a large one as float16 in a shared WebAssembly memory (see {@link HalfRows}), at half the
 * memory, whose SIMD kernel scores candidates on both cores, and whose cosines are those of the rows as stored (within
 * about 1e-5 of the exact ones). Vectors are copied in, so that nothing outside can change them.
 */
import { grownTo } from "../util/typed_arrays.ts";
import { HalfRows, halfStride } from "../vector_scan/half_rows.ts";
import type { FileMapper } from "../util/file_mapping.ts";
import type { KeptRows } from "../segments/rows_files.ts";

/**
 * From this many rows the vectors move to shared memory: just above the largest index that the native exact search
 * scans whole (`EXACT_SEARCH_MAX_VECTORS`). That library takes no view of shared memory, so from here on an index's
 * candidates come from its graph, also if it shrinks below that size again (see `VectorCandidates`); only a store
 * restored without a graph copies its rows out for it (see {@link VectorStore.rows}).
 */
const SHARED_FROM_ROWS = 10_240;
/** A shared store grows by at least this share of its rows, so that its memory grows once per many writes. */
const SHARED_GROWTH = 0.125;

/** Whether this runtime gives shared WebAssembly memory; false once it has refused. */
let sharedMemoryWorks = true;

/** Slots and their cosine similarity to a query. */
export interface SlotScores {
  slots: number[];
  scores: number[];
}

/** Slots and their scores, in arrays of any kind, as ranking reads them. */
export interface ScoredSlots {
  slots: ArrayLike<number>;
  scores: ArrayLike<number>;
}

/** Stores one vector per slot; every vector has the dimensions of the first. */
export class VectorStore {
  #dims = 0;
  #data = new Float32Array(0);
  #shared: HalfRows | undefined;
  #norms = new Float64Array(0);

  /** Whether the rows are float16 in shared memory (see {@link SHARED_FROM_ROWS}). */
  get halfRows(): boolean {
    return this.#shared !== undefined;
  }

  /** The dimensions of the stored vectors, 0 before the first. */
  get dims(): number {
    return this.#dims;
  }

  /** Bytes of memory it holds. */
  get bytes(): number {
    return this.#data.byteLength + (this.#shared?.bytes ?? 0) + this.#norms.byteLength;
  }

  /** Makes room for `slots` vectors of `dims` dimensions at once, as a snapshot load knows both. */
  reserve(slots: number, dims: number): void {
    if (this.#dims === 0) this.#dims = dims;
    this.#grow(slots, 0);
  }

  /** Stores the vector of a slot; throws if its dimensions differ from the others'. */
  set(slot: number, vector: Float32Array): void {
    if (this.#dims === 0) this.#dims = vector.length;
    this.checkDims(vector);
    this.#grow(slot + 1, 1);
    if (this.#shared !== undefined) {
      this.#norms[slot] = this.#shared.set(slot, vector);
    } else {
      this.#data.set(vector, slot * this.#dims);
      this.#norms[slot] = norm(vector);
    }
  }

  /**
   * Stores the vector of a slot from the float16 values `halves` (as bytes) of a row that a store with
   * {@link halfRows} held, as a snapshot keeps it: copied as it is into shared memory, or widened where there is none.
   */
  setHalves(slot: number, halves: Uint8Array): void {
    const dims = halves.byteLength / 2;
    if (this.#dims === 0) this.#dims = dims;
    this.#grow(slot + 1, 1);
    if (this.#shared !== undefined && dims === this.#dims) {
      this.#norms[slot] = this.#shared.setHalves(slot, halves);
    } else {
      // A Float16Array views only 2-byte aligned bytes.
      this.set(slot, Float32Array.from(new Float16Array(halves.slice().buffer)));
    }
  }

  /**
   * Bytes per row as {@link rowsOf} gives them: float16 padded to a multiple of eight dimensions where the rows are
   * {@link halfRows}, else float32.
   */
  get rowBytes(): number {
    return this.#shared?.stride ?? this.#dims * 4;
  }

  /** The stored rows of slots `from` to `from + count`, as bytes ({@link rowBytes} each), as a view to copy at once. */
  rowsOf(from: number, count: number): Uint8Array {
    if (this.#shared !== undefined) return this.#shared.halvesOf(from, count);
    const rows = this.#data.subarray(from * this.#dims, (from + count) * this.#dims);
    return new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength);
  }

  /**
   * Stores whole rows from slot `from` on, as {@link rowsOf} gave them (`halves` says in which kind), within the room
   * {@link reserve} made: in one copy where this store keeps that kind, else row by row.
   */
  setRowsOf(from: number, bytes: Uint8Array, halves: boolean): void {
    const shared = this.#shared;
    if (halves && shared !== undefined) {
      shared.setHalvesOf(from, bytes, this.#norms);
      return;
    }
    const stride = halves ? halfStride(this.#dims) : this.#dims * 4;
    for (let row = 0; row * stride < bytes.byteLength; row++) {
      const stored = bytes.subarray(row * stride, row * stride + (halves ? this.#dims * 2 : stride));
      if (halves) this.setHalves(from + row, stored);
      else this.set(from + row, new Float32Array(stored.slice().buffer));
    }
  }

  /**
   * Maps the rows of a kept rows file from slot 0 on, within the room {@link reserve} made, and takes their lengths from
   * it, where the rows are {@link halfRows}; false when they cannot be mapped, and then they are copied in as before.
   */
  mapRowsOf(mapper: FileMapper, kept: KeptRows): boolean {
    const shared = this.#shared;
    if (shared === undefined || kept.lengths.length > this.#norms.length) return false;
    if (!shared.mapRows(mapper, kept.path, kept.offset, kept.mappedBytes)) return false;
    this.#norms.set(kept.lengths);
    return true;
  }

  /** The lengths of the rows of the first `count` slots, as a view, as a rows file keeps them. */
  lengthsOf(count: number): Float64Array {
    return this.#norms.subarray(0, count);
  }

  /**
   * The stored vector of a slot, as a view that callers must not change; from shared memory, a copy of the row as
   * stored, which is the vector scaled (see {@link HalfRows}), as a cosine reads it.
   */
  row(slot: number): Float32Array {
    if (this.#shared !== undefined) return this.#shared.row(slot);
    return this.#heapRow(slot);
  }

  /**
   * Calls `use` with the stored vector of each of `slots` in turn (and its place in `slots`), as a view that is valid
   * only during the call: rows read from shared memory are widened into one place, not copied out one by one.
   */
  forEachRow(slots: readonly number[], use: (row: Float32Array, at: number) => void): void {
    const shared = this.#shared;
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!;
      use(shared?.rowView(slot) ?? this.#heapRow(slot), i);
    }
  }

  /**
   * The vectors of the first `count` slots, as one array that callers must not change: a view, or a copy from shared
   * memory (only an index that has shrunk far below the rows it once held scans its rows whole, see
   * {@link SHARED_FROM_ROWS}).
   */
  rows(count: number): Float32Array {
    if (this.#shared !== undefined) return this.#shared.copyRows(count);
    return this.#data.subarray(0, count * this.#dims);
  }

  /** The cosine similarity of `query` to the vector of each slot in `slots`, with `slots` itself. */
  scores(query: Float32Array, slots: number[]): SlotScores {
    this.checkDims(query);
    const dots = this.#shared?.dots(query, slots) ?? this.#dots(query, slots);
    const queryNorm = norm(query);
    const scores = new Array<number>(slots.length);
    for (let i = 0; i < slots.length; i++) {
      const norms = queryNorm * this.#norms[slots[i]!]!;
      // Rounding can carry a cosine just past ±1.
      scores[i] = norms === 0 ? 0 : Math.max(-1, Math.min(1, dots[i]! / norms));
    }
    return { slots, scores };
  }

  /** Throws a RangeError unless `vector` has the stored dimensions. */
  checkDims(vector: Float32Array): void {
    if (vector.length !== this.#dims) {
      throw new RangeError(`Vector has ${vector.length} dimensions; this index holds ${this.#dims}`);
    }
  }

  /** Dot products in four sums, of dimensions 4k, 4k+1, 4k+2 and 4k+3, so that the additions do not wait on each other. */
  #dots(query: Float32Array, slots: readonly number[]): Float64Array {
    const dims = this.#dims;
    const data = this.#data;
    const result = new Float64Array(slots.length);
    for (let s = 0; s < slots.length; s++) {
      const base = slots[s]! * dims;
      let a = 0, b = 0, c = 0, d = 0;
      let i = 0;
      for (; i + 3 < dims; i += 4) {
        a += query[i]! * data[base + i]!;
        b += query[i + 1]! * data[base + i + 1]!;
        c += query[i + 2]! * data[base + i + 2]!;
        d += query[i + 3]! * data[base + i + 3]!;
      }
      if (i < dims) a += query[i]! * data[base + i]!;
      if (i + 1 < dims) b += query[i + 1]! * data[base + i + 1]!;
      if (i + 2 < dims) c += query[i + 2]! * data[base + i + 2]!;
      result[s] = (a + b) + (c + d);
    }
    return result;
  }

  /** The row of a slot in the heap's flat array, as a view. */
  #heapRow(slot: number): Float32Array {
    return this.#data.subarray(slot * this.#dims, (slot + 1) * this.#dims);
  }

  /** Makes room for `slots` rows, and `headroom` times as many again when it must grow. */
  #grow(slots: number, headroom: number): void {
    if (slots > this.#norms.length) {
      this.#norms = grownTo(this.#norms, Math.max(16, slots, Math.ceil(this.#norms.length * (1 + headroom))));
    }
    if (this.#shared === undefined && slots >= SHARED_FROM_ROWS) this.#share(slots);
    const shared = this.#shared;
    if (shared === undefined) {
      if (slots * this.#dims > this.#data.length) this.#data = grownTo(this.#data, this.#norms.length * this.#dims);
    } else if (slots > shared.capacity) {
      shared.reserve(Math.max(slots, Math.ceil(shared.capacity * (1 + SHARED_GROWTH * headroom))));
    }
  }

  /** Moves the rows to shared memory, where the runtime gives it. */
  #share(slots: number): void {
    if (!sharedMemoryWorks) return;
    // Rows past the last with a vector are zeros, as the new memory is: only those up to it are copied.
    let used = Math.min(this.#norms.length, this.#data.length / this.#dims);
    while (used > 0 && this.#norms[used - 1] === 0) used--;
    let shared: HalfRows;
    try {
      shared = new HalfRows(this.#dims, Math.max(slots, used));
    } catch {
      sharedMemoryWorks = false;
      return;
    }
    // Scores from here on are those of the rows as stored, and so are the lengths they divide by.
    for (let slot = 0; slot < used; slot++) {
      this.#norms[slot] = shared.set(slot, this.#heapRow(slot));
    }
    this.#shared = shared;
    this.#data = new Float32Array(0);
  }
}

function norm(vector: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  return Math.sqrt(sum);
}
