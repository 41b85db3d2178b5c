/**
 * Float32 vectors in a shared WebAssembly memory, one row per slot, and their exact dot products with a query by a SIMD
 * kernel, in chunks shared with the helper thread when there are many (see {@link ParallelKernels}). Rows lie at the
 * memory's end, so it grows in place, by as many pages as new rows need: old views stay valid, and no room is held
 * for rows that may never come.
 */
import { growMemory, scanKernels, sharedMemory } from "./scan_kernels.ts";
import { ParallelKernels } from "./scan_helper.ts";

/** Slots a kernel pass takes at most: the size of the ids and results areas. */
const PASS_SLOTS = 1_024;
/** A pass is cut into chunks of at least this many slots, shared with the helper thread; see {@link ParallelKernels}. */
const CHUNK_SLOTS = 128;

/** Float32 rows by slot in a shared memory, with exact dot products. */
export class FloatRows {
  readonly #dims: number;
  /** Bytes per row: the dimensions padded with zeros to the kernel's 16-byte steps. */
  readonly #stride: number;
  readonly #memory: WebAssembly.Memory;
  readonly #parallel: ParallelKernels;
  /** Where the areas lie: the query as float64, the slots of a call, their results, then the rows. */
  readonly #ids: number;
  readonly #out: number;
  readonly #rows: number;
  #capacity = 0;
  #floats!: Float32Array;

  /** Throws where the runtime has no shared WebAssembly memory. */
  constructor(dims: number, capacity: number) {
    this.#dims = dims;
    this.#stride = Math.ceil(dims / 4) * 16;
    this.#ids = this.#stride * 2;
    this.#out = this.#ids + PASS_SLOTS * 4;
    // Rows on cache lines of their own.
    this.#rows = Math.ceil((this.#out + PASS_SLOTS * 8) / 64) * 64;
    this.#memory = sharedMemory(this.#bytesFor(capacity));
    this.#parallel = new ParallelKernels(this.#memory, scanKernels(this.#memory));
    this.#remap();
  }

  /** Bytes of memory it holds. */
  get bytes(): number {
    return this.#memory.buffer.byteLength;
  }

  /** How many rows fit without growing. */
  get capacity(): number {
    return this.#capacity;
  }

  /** Makes room for `rows` rows, growing the memory in place by the pages they need. */
  reserve(rows: number): void {
    if (rows <= this.#capacity) return;
    growMemory(this.#memory, this.#bytesFor(rows));
    this.#remap();
  }

  /** Writes the vector of a slot within the capacity. */
  set(slot: number, vector: Float32Array): void {
    this.#floats.set(vector, this.#floatAt(slot));
  }

  /** The row of a slot, as a view that callers must not change. */
  row(slot: number): Float32Array {
    const at = this.#floatAt(slot);
    return this.#floats.subarray(at, at + this.#dims);
  }

  /** The first `count` rows, as one unpadded copy (a native library may not take a view of shared memory). */
  copyRows(count: number): Float32Array {
    const copy = new Float32Array(count * this.#dims);
    for (let slot = 0; slot < count; slot++) copy.set(this.row(slot), slot * this.#dims);
    return copy;
  }

  /** The dot product of `query` with the row of each of `slots`, in their order. */
  dots(query: Float32Array, slots: readonly number[]): Float64Array {
    const buffer = this.#memory.buffer;
    new Float64Array(buffer, 0, this.#dims).set(query);
    const ids = new Int32Array(buffer, this.#ids, PASS_SLOTS);
    const out = new Float64Array(buffer, this.#out, PASS_SLOTS);
    const result = new Float64Array(slots.length);
    for (let from = 0; from < slots.length; from += PASS_SLOTS) {
      const count = Math.min(PASS_SLOTS, slots.length - from);
      for (let i = 0; i < count; i++) ids[i] = slots[from + i]!;
      this.#parallel.inChunks("floatDotsAt", count, CHUNK_SLOTS, (start, end) => [
        this.#rows,
        this.#ids + start * 4,
        end - start,
        this.#stride,
        0,
        this.#out + start * 8,
      ]);
      result.set(out.subarray(0, count), from);
    }
    return result;
  }

  #floatAt(slot: number): number {
    return (this.#rows + slot * this.#stride) / 4;
  }

  #bytesFor(rows: number): number {
    return this.#rows + rows * this.#stride;
  }

  /** Views the memory anew after it grew: a shared memory's buffer keeps the length it had when read. */
  #remap(): void {
    const buffer = this.#memory.buffer;
    this.#floats = new Float32Array(buffer);
    this.#capacity = Math.floor((buffer.byteLength - this.#rows) / this.#stride);
  }
}
