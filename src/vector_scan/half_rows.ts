/**
 * Vectors in a shared WebAssembly memory as float16, one row per slot, and their dot products with a query by a SIMD
 * kernel, in chunks shared with the helper thread when there are many (see {@link ParallelKernels}). Half the memory of
 * float32 rows: 768 bytes a row at 384 dimensions, 0.7 GiB less at a million. Each row is first scaled by a power of two
 * that brings its largest component within [0.5, 1]: float16 holds at most 65,504, and a cosine does not change with a
 * vector's scale. A component then keeps 11 significant bits, so a cosine moves by about 1e-5 from the float32 one.
 * Scaling by a power of two is exact, and a row read back lies within [0.5, 1] already, so storing it again gives the
 * same halves: a snapshot, which stores rows as float32, restores them bit for bit. Rows lie at the memory's end, so
 * it grows in place, by as many pages as new rows need: no room is held for rows that may never come.
 */
import { growMemory, type ScanKernels, scanKernels, sharedMemory } from "./scan_kernels.ts";
import { ParallelKernels } from "./scan_helper.ts";
import { type FileMapper, MAPPING_ALIGN } from "../util/file_mapping.ts";

/** Slots a kernel pass takes at most: the size of the ids and results areas. */
const PASS_SLOTS = 1_024;
/** A pass is cut into chunks of at least this many slots, shared with the helper thread; see {@link ParallelKernels}. */
const CHUNK_SLOTS = 128;
/** The kernels take eight halves (16 bytes) a step, so rows are padded to a multiple of eight dimensions. */
const STEP_DIMS = 8;

/** Float16 rows by slot in a shared memory, with dot products in float64. */
export class HalfRows {
  readonly #dims: number;
  /** Bytes per row: the dimensions padded with zeros to the kernels' steps, two bytes each. */
  readonly #stride: number;
  readonly #memory: WebAssembly.Memory;
  readonly #kernels: ScanKernels;
  readonly #parallel: ParallelKernels;
  /**
   * Where the areas lie: the query as float64, the slots of a call, their results, a row as float32 (zeros past the
   * dimensions) on its way in or out, then the rows.
   */
  readonly #ids: number;
  readonly #out: number;
  readonly #floats: number;
  readonly #rows: number;
  #capacity = 0;
  /** The float32 row area, viewed anew whenever the memory grows. */
  #floatRow!: Float32Array;

  /** Throws where the runtime has no shared WebAssembly memory. */
  constructor(dims: number, capacity: number) {
    this.#dims = dims;
    const padded = Math.ceil(dims / STEP_DIMS) * STEP_DIMS;
    this.#stride = halfStride(dims);
    this.#ids = padded * 8;
    this.#out = this.#ids + PASS_SLOTS * 4;
    this.#floats = this.#out + PASS_SLOTS * 8;
    // Rows from a page of their own, where a file of rows may be mapped (see mapRows).
    this.#rows = Math.ceil((this.#floats + padded * 4) / MAPPING_ALIGN) * MAPPING_ALIGN;
    this.#memory = sharedMemory(this.#bytesFor(capacity));
    this.#kernels = scanKernels(this.#memory);
    this.#parallel = new ParallelKernels(this.#memory, this.#kernels);
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

  /** Writes the vector of a slot within the capacity, scaled and rounded; returns the length of the row as stored. */
  set(slot: number, vector: Float32Array): number {
    let largest = 0;
    for (let i = 0; i < vector.length; i++) largest = Math.max(largest, Math.abs(vector[i]!));
    this.#floatRow.set(vector);
    return Math.sqrt(this.#kernels.toHalves(this.#floats, this.#stride, scaleFor(largest), this.#rowAt(slot)));
  }

  /**
   * Writes the row of a slot within the capacity as the float16 values `halves` (`dims` of them, as bytes), which are
   * a row this class stored, so within its scale already; returns the length of the row.
   */
  setHalves(slot: number, halves: Uint8Array): number {
    const at = this.#rowAt(slot);
    const row = new Uint8Array(this.#memory.buffer, at, this.#stride);
    row.set(halves);
    row.fill(0, halves.byteLength);
    return Math.sqrt(this.#kernels.halfSquares(at, this.#stride));
  }

  /** Bytes per row as stored: the dimensions padded with zeros to a multiple of eight, two bytes each. */
  get stride(): number {
    return this.#stride;
  }

  /**
   * The rows from slot `from` on, `count` of them, as stored ({@link stride} bytes each), as a view that holds until the
   * memory next grows: a snapshot copies them as they are.
   */
  halvesOf(from: number, count: number): Uint8Array {
    return new Uint8Array(this.#memory.buffer, this.#rowAt(from), count * this.#stride);
  }

  /**
   * Writes whole rows from slot `from` on, within the capacity, as {@link halvesOf} gave them, in one copy; writes the
   * length of each row into `lengths` from `from` on.
   */
  setHalvesOf(from: number, halves: Uint8Array, lengths: Float64Array): void {
    const at = this.#rowAt(from);
    new Uint8Array(this.#memory.buffer, at, halves.byteLength).set(halves);
    const count = halves.byteLength / this.#stride;
    // A kernel call per pass of rows: a call per row cost a load more than the copy.
    for (let done = 0; done < count; done += PASS_SLOTS) {
      const rows = Math.min(PASS_SLOTS, count - done);
      this.#kernels.halfSquaresOf(at + done * this.#stride, rows, this.#stride, this.#out);
      const squares = new Float64Array(this.#memory.buffer, this.#out, rows);
      for (let row = 0; row < rows; row++) lengths[from + done + row] = Math.sqrt(squares[row]!);
    }
  }

  /**
   * Maps rows from slot 0 on from a file instead of copying them in: `bytes` of the file at `path` from `offset` on
   * hold them as {@link halvesOf} gives them, padded with zeros to whole pages, within the capacity. False when they
   * cannot be mapped; then the caller copies them.
   */
  mapRows(mapper: FileMapper, path: string, offset: number, bytes: number): boolean {
    return mapper.mapInto(this.#memory, this.#rows, path, offset, bytes);
  }

  /** The row of a slot as stored (scaled), as a float32 copy. */
  row(slot: number): Float32Array {
    return this.rowView(slot).slice();
  }

  /** The row of a slot as stored, as a float32 view that the next call of any method overwrites. */
  rowView(slot: number): Float32Array {
    this.#kernels.fromHalves(this.#rowAt(slot), this.#stride, this.#floats);
    return this.#floatRow;
  }

  /** The first `count` rows as stored, as one unpadded float32 copy. */
  copyRows(count: number): Float32Array {
    const copy = new Float32Array(count * this.#dims);
    for (let slot = 0; slot < count; slot++) copy.set(this.rowView(slot), slot * this.#dims);
    return copy;
  }

  /** The dot product of `query` with the row of each of `slots` as stored, in their order. */
  dots(query: Float32Array, slots: readonly number[]): Float64Array {
    const buffer = this.#memory.buffer;
    new Float64Array(buffer, 0, this.#dims).set(query);
    const ids = new Int32Array(buffer, this.#ids, PASS_SLOTS);
    const out = new Float64Array(buffer, this.#out, PASS_SLOTS);
    const result = new Float64Array(slots.length);
    for (let from = 0; from < slots.length; from += PASS_SLOTS) {
      const count = Math.min(PASS_SLOTS, slots.length - from);
      for (let i = 0; i < count; i++) ids[i] = slots[from + i]!;
      this.#parallel.inChunks("halfDotsAt", count, CHUNK_SLOTS, (start, end) => [
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

  #rowAt(slot: number): number {
    return this.#rows + slot * this.#stride;
  }

  #bytesFor(rows: number): number {
    return this.#rows + rows * this.#stride;
  }

  /** Views the memory anew after it grew: a shared memory's buffer keeps the length it had when read. */
  #remap(): void {
    const buffer = this.#memory.buffer;
    this.#floatRow = new Float32Array(buffer, this.#floats, this.#dims);
    this.#capacity = Math.floor((buffer.byteLength - this.#rows) / this.#stride);
  }
}

/** Bytes of a row of `dims` dimensions as stored: padded with zeros to the kernels' steps, two bytes each. */
export function halfStride(dims: number): number {
  return Math.ceil(dims / STEP_DIMS) * STEP_DIMS * 2;
}

/**
 * The power of two that brings `largest` within [0.5, 1]; 1 when it is there already (a row read back) or 0. Bounded
 * by float32's largest power of two, which the kernel takes it as.
 */
function scaleFor(largest: number): number {
  if (largest === 0 || (largest >= 0.5 && largest <= 1)) return 1;
  return 2 ** Math.min(127, -Math.floor(Math.log2(largest)) - 1);
}
