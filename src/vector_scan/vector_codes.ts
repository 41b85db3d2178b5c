/**
 * Compact copies of an index's vectors for exact scans, in WebAssembly memory (outside the JS heap): each slot's vector
 * as int8 codes scaled to its largest component, and as sign bits. A scan ranks codes by cosine with SIMD kernels; a
 * prefiltered scan first takes the slots whose sign bits are nearest the query, and ranks only their codes.
 *
 * Sign bits are weighed by the query: a slot's distance is the sum of the query's magnitudes (in 4 bits) where the
 * slot's signs differ from the query's, which estimates the cosine far better than the count of differing bits: on
 * near-random vectors, a several times smaller share of the slots holds as many of the true nearest (see "Tuned vector
 * search" in the README). The bits lie in blocks of 32 slots, four bits of a slot in half a byte, so that a SIMD
 * swizzle looks up the query's table of 16 sums for 16 slots at once; weighing costs no more than counting did. Each
 * kernel pass of a large scan runs in chunks that this thread and a helper thread share (see {@link ParallelKernels}).
 */
import { BestSlots } from "./best_slots.ts";
import { growMemory, type ScanKernels, scanKernels, sharedMemory } from "./scan_kernels.ts";
import { ParallelKernels } from "./scan_helper.ts";
import { grownTo } from "../util/typed_arrays.ts";
import { MAPPING_ALIGN } from "../util/file_mapping.ts";
import type { CodesParts, SavedCodes } from "./saved_codes.ts";

/** The kernels read 16 bytes a step, so rows are padded to a multiple of it. */
const STEP_BYTES = 16;
/** How many rows' distances a prefiltered scan counts to find its cut. */
const CUT_SAMPLE = 16_384;
/** Sign bits lie in blocks of this many rows; capacities are multiples of it. */
const BLOCK_ROWS = 32;
/** A query's magnitudes weigh the sign bits that differ from its own, in this many bits: 0 to 15. */
const MAGNITUDE_TOP = 15;
/** The largest entry of a query's table: the magnitudes of a group of four dimensions. */
const TABLE_TOP = 4 * MAGNITUDE_TOP;
/**
 * Kernel passes are cut into chunks of at least this many rows (of codes, bits or distances), or listed rows, shared
 * with the helper thread; a smaller one takes less time to run than to hand over.
 */
const CHUNK_ROWS = 4_096;
const CHUNK_LISTED = 512;

/** Where each area lies in the memory, for a capacity of rows. */
interface Layout {
  capacity: number;
  /** The query as int16, a block for its sign bits, and its tables: 16 bytes for each group of four dimensions. */
  query: number;
  queryBits: number;
  tables: number;
  /** A vector to quantize, as float32 padded with zeros to the row's stride, and the query's int8 codes. */
  floats: number;
  queryCode: number;
  /** An int32 per row: the kernels' results. */
  out: number;
  /** An int32 per row: the rows a prefiltered scan ranks. */
  ids: number;
  /** Sign bits in blocks of {@link BLOCK_ROWS} rows. */
  bits: number;
  codes: number;
  end: number;
}

/** Int8 codes and sign bits of vectors by slot, and the scans over them. */
export class VectorCodes {
  readonly #dims: number;
  /** Bytes per row of codes, and of sign bits; groups of four sign bits per row. */
  readonly #stride: number;
  readonly #bitStride: number;
  readonly #groups: number;
  readonly #memory: WebAssembly.Memory;
  readonly #kernels: ScanKernels;
  readonly #parallel: ParallelKernels;
  #layout: Layout;
  /** The floats area, viewed anew whenever the memory grows. */
  #floats!: Float32Array;
  /** Each slot's code length's inverse (the cosine's divisor); 0 for a slot without a vector. */
  #inverseNorms = new Float32Array(0);
  #live = new Uint8Array(0);
  #liveCount = 0;
  /** Slots up to the highest that {@link set} was given. */
  #rows = 0;

  constructor(dims: number) {
    this.#dims = dims;
    this.#stride = roundUp(dims, STEP_BYTES);
    this.#bitStride = roundUp(Math.ceil(dims / 8), STEP_BYTES);
    this.#groups = this.#bitStride * 2;
    this.#layout = this.#layoutFor(0);
    this.#memory = sharedMemory(this.#layout.end);
    this.#kernels = scanKernels(this.#memory);
    this.#parallel = new ParallelKernels(this.#memory, this.#kernels);
    this.#viewFloats();
  }

  /** Bytes of memory the codes hold. */
  get bytes(): number {
    return this.#memory.buffer.byteLength + this.#inverseNorms.byteLength + this.#live.byteLength;
  }

  /** How many slots hold a vector. */
  get size(): number {
    return this.#liveCount;
  }

  /** Writes the codes and sign bits of `vector` for `slot`. */
  set(slot: number, vector: Float32Array): void {
    if (slot >= this.#rows) this.#grow(slot + 1);
    this.#inverseNorms[slot] = this.#quantizeRow(vector, slot);
    if (this.#live[slot] === 0) this.#liveCount++;
    this.#live[slot] = 1;
  }

  /**
   * Its state in parts, for a file to keep and {@link restore} to take back: views that hold until the codes next
   * change or grow.
   */
  parts(): CodesParts {
    const rows = this.#rows;
    const bytes = new Uint8Array(this.#memory.buffer);
    const { bits, codes } = this.#layout;
    const sizes = this.partBytes(rows);
    return {
      dims: this.#dims,
      rows,
      inverseNorms: this.#inverseNorms.subarray(0, rows),
      live: this.#live.subarray(0, rows),
      bits: bytes.subarray(bits, bits + sizes.bits),
      codes: bytes.subarray(codes, codes + sizes.codes),
    };
  }

  /** The bytes of the sign bits and of the codes of the first `rows` rows, as {@link parts} gives them. */
  partBytes(rows: number): { bits: number; codes: number } {
    return { bits: Math.ceil(rows / BLOCK_ROWS) * this.#blockBytes, codes: rows * this.#stride };
  }

  /**
   * Takes back what {@link parts} gave, as a load found them saved, into codes that hold nothing yet, where writing the
   * codes anew quantizes every vector: the large parts are placed (mapped or copied) where they lie in the memory.
   * Returns false, and holds nothing, for parts of other dimensions or sizes, whose slots with a vector are not exactly
   * `holders`, or that cannot be placed.
   */
  restore(saved: SavedCodes, holders: readonly number[]): boolean {
    const { rows, live } = saved;
    if (this.#rows !== 0 || saved.dims !== this.#dims || live.length !== rows || saved.inverseNorms.length !== rows) {
      return false;
    }
    const sizes = saved.bitsBytes === Math.ceil(rows / BLOCK_ROWS) * this.#blockBytes &&
      saved.codesBytes === rows * this.#stride;
    if (!sizes || live.reduce((count, byte) => count + byte, 0) !== holders.length) return false;
    if (holders.some((slot) => live[slot] !== 1)) return false;
    this.reserve(rows);
    const { bits, codes } = this.#layout;
    if (!saved.place("bits", this.#memory, bits) || !saved.place("codes", this.#memory, codes)) {
      new Uint8Array(this.#memory.buffer).fill(0, bits, this.#layout.end);
      return false;
    }
    this.#rows = rows;
    this.#inverseNorms.set(saved.inverseNorms);
    this.#live.set(live);
    this.#liveCount = holders.length;
    return true;
  }

  /**
   * Makes room for `rows` rows, doubling the room when that is more: a load that knows its rows makes room for them at
   * once, since growing one vector at a time moved every code about twice, a cost that shows in a large load.
   */
  reserve(rows: number): void {
    if (rows > this.#layout.capacity) {
      this.#moveTo(roundUp(Math.max(rows, this.#layout.capacity * 2, 1024), BLOCK_ROWS));
    }
  }

  /** Removes the vector of `slot`, if any. */
  clear(slot: number): void {
    if (this.#live[slot] !== 1) return;
    // A zero vector's codes and bits are zeros.
    this.#quantizeRow(new Float32Array(this.#dims), slot);
    this.#inverseNorms[slot] = 0;
    this.#live[slot] = 0;
    this.#liveCount--;
  }

  /**
   * The `count` slots whose codes are nearest to `query` by cosine, nearest first. With a `depth` below the number of
   * vectors, only the `depth` slots whose sign bits differ least from the query's are ranked by their codes.
   */
  scan(query: Float32Array, count: number, depth = Infinity): number[] {
    if (this.#liveCount === 0) return [];
    this.#writeQuery(query);
    if (depth >= this.#liveCount) return this.#rankAll(count);
    return this.#rankAmong(count, this.#nearestBits(depth));
  }

  /** The `count` of `slots` (which hold vectors) whose codes are nearest to `query`, nearest first. */
  scanAmong(query: Float32Array, count: number, slots: readonly number[]): number[] {
    if (slots.length <= count) return [...slots];
    this.#writeQuery(query);
    const ids = new Int32Array(this.#memory.buffer, this.#layout.ids, slots.length);
    ids.set(slots);
    // Rows in order: the memory reads ahead.
    ids.sort();
    return this.#rankAmong(count, slots.length);
  }

  /**
   * Writes the query's int8 codes widened to int16, and its tables: for each group of four dimensions, for each of the
   * 16 ways a row's four sign bits may lie, the sum of the query's magnitudes where they differ from its signs.
   */
  #writeQuery(query: Float32Array): void {
    const { query: at, queryBits, queryCode, tables: tablesAt } = this.#layout;
    this.#quantize(query, queryCode, queryBits, 0);
    const code = new Int8Array(this.#memory.buffer, queryCode, this.#dims);
    new Int16Array(this.#memory.buffer, at, this.#dims).set(code);
    const tables = new Uint8Array(this.#memory.buffer, tablesAt, this.#groups * 16);
    // What setting each bit of a group adds: a row's positive sign agrees with a positive query component.
    const adds = [0, 0, 0, 0];
    for (let group = 0; group < this.#groups; group++) {
      let none = 0;
      for (let bit = 0; bit < 4; bit++) {
        const component = code[group * 4 + bit] ?? 0;
        const magnitude = Math.round(Math.abs(component) * MAGNITUDE_TOP / 127);
        none += component > 0 ? magnitude : 0;
        adds[bit] = component > 0 ? -magnitude : magnitude;
      }
      const table = group * 16;
      tables[table] = none;
      for (let bits = 1; bits < 16; bits++) {
        const lowest = 31 - Math.clz32(bits & -bits);
        tables[table + bits] = tables[table + (bits & (bits - 1))]! + adds[lowest]!;
      }
    }
  }

  /** Writes the codes and sign bits of `vector` for `slot`; returns the inverse of the code's length. */
  #quantizeRow(vector: Float32Array, slot: number): number {
    const { codes, bits } = this.#layout;
    const block = bits + Math.floor(slot / BLOCK_ROWS) * this.#blockBytes;
    return this.#quantize(vector, codes + slot * this.#stride, block, slot % BLOCK_ROWS);
  }

  /**
   * Writes `vector` as int8 codes at `code`, scaled so that its largest component is ±127 (cosines keep), and its sign
   * bits as `row` of the block at `block`, by the SIMD kernel; returns the inverse of the code's length, or 0 for a zero
   * vector.
   */
  #quantize(vector: Float32Array, code: number, block: number, row: number): number {
    this.#floats.set(vector);
    const squares = this.#kernels.quantize(this.#layout.floats, this.#stride, code, block, row);
    return squares === 0 ? 0 : 1 / Math.sqrt(squares);
  }

  /** Bytes of a block of sign bits. */
  get #blockBytes(): number {
    return this.#bitStride * BLOCK_ROWS;
  }

  #rankAll(count: number): number[] {
    const { codes, query, out } = this.#layout;
    const stride = this.#stride;
    this.#parallel.inChunks(
      "dots",
      this.#rows,
      CHUNK_ROWS,
      (from, to) => [codes + from * stride, to - from, stride, query, out + from * 4],
    );
    const dots = new Int32Array(this.#memory.buffer, out, this.#rows);
    const best = new BestSlots(count);
    for (let slot = 0; slot < this.#rows; slot++) {
      if (this.#live[slot] === 1) best.offer(slot, dots[slot]! * this.#inverseNorms[slot]!);
    }
    return best.sorted();
  }

  /** Ranks by their codes the first `length` rows listed in the ids area. */
  #rankAmong(count: number, length: number): number[] {
    const { codes, ids, query, out } = this.#layout;
    const stride = this.#stride;
    this.#parallel.inChunks(
      "dotsAt",
      length,
      CHUNK_LISTED,
      (from, to) => [codes, ids + from * 4, to - from, stride, query, out + from * 4],
    );
    const slots = new Int32Array(this.#memory.buffer, ids, length);
    const dots = new Int32Array(this.#memory.buffer, out, length);
    const best = new BestSlots(count);
    for (let i = 0; i < length; i++) {
      const slot = slots[i]!;
      if (this.#live[slot] === 1) best.offer(slot, dots[i]! * this.#inverseNorms[slot]!);
    }
    return best.sorted();
  }

  /**
   * Lists in the ids area, in row order, about `depth` rows whose sign bits lie nearest the query's by weight; returns
   * how many it listed. Distances are small integers, so counting them in a sample of rows finds the cut without
   * sorting.
   */
  #nearestBits(depth: number): number {
    const { bits, ids, out, tables } = this.#layout;
    const rows = this.#rows;
    const blockBytes = this.#blockBytes;
    this.#parallel.inChunks(
      "weighted",
      Math.ceil(rows / BLOCK_ROWS),
      CHUNK_ROWS / BLOCK_ROWS,
      (from, to) => [bits + from * blockBytes, to - from, this.#groups, tables, out + from * BLOCK_ROWS * 4],
    );
    const distances = new Int32Array(this.#memory.buffer, out, rows);
    const histogram = new Int32Array(this.#groups * TABLE_TOP + 1);
    const every = Math.max(1, Math.floor(rows / CUT_SAMPLE));
    for (let row = 0; row < rows; row += every) histogram[distances[row]!]!++;
    const wanted = depth / every;
    let cut = 0;
    let below = 0;
    while (cut < histogram.length - 1 && below + histogram[cut]! < wanted) below += histogram[cut++]!;
    // Each chunk lists its rows from its own start, and takes its share of the ties at the cut.
    const ties = Math.round((wanted - below) * every);
    const { starts, results } = this.#parallel.inChunks(
      "within",
      rows,
      CHUNK_ROWS,
      (from, to) => [out + from * 4, to - from, cut, Math.round(ties * (to - from) / rows), ids + from * 4],
    );
    // Each chunk's list moves down to follow the ones before it, its rows counted from the whole pass's start.
    const listed = new Int32Array(this.#memory.buffer, ids, rows);
    let count = 0;
    starts.forEach((start, chunk) => {
      for (let i = 0; i < results[chunk]!; i++) listed[count + i] = listed[start + i]! + start;
      count += results[chunk]!;
    });
    return count;
  }

  /** Makes room for `rows` rows, and counts them. */
  #grow(rows: number): void {
    this.reserve(rows);
    this.#rows = rows;
  }

  /** Moves the codes and bits to their places in a memory with room for `capacity` rows. */
  #moveTo(capacity: number): void {
    const old = this.#layout;
    const layout = this.#layoutFor(capacity);
    growMemory(this.#memory, layout.end);
    const bytes = new Uint8Array(this.#memory.buffer);
    // Both areas move up; the codes lie above the bits, so they move first. What the old areas held is zeroed where
    // nothing moved onto it; past their end the memory was never written, so a restore into fresh codes touches no page.
    bytes.copyWithin(layout.codes, old.codes, old.codes + this.#rows * this.#stride);
    bytes.fill(0, layout.codes + this.#rows * this.#stride, Math.max(layout.codes, old.end));
    const blocks = Math.ceil(this.#rows / BLOCK_ROWS) * this.#blockBytes;
    bytes.copyWithin(layout.bits, old.bits, old.bits + blocks);
    bytes.fill(0, layout.bits + blocks, Math.min(layout.codes, Math.max(layout.bits + blocks, old.end)));
    this.#layout = layout;
    this.#viewFloats();
    this.#inverseNorms = grownTo(this.#inverseNorms, layout.capacity);
    this.#live = grownTo(this.#live, layout.capacity);
  }

  /** Views the floats area, whose padding past the dimensions stays zero. */
  #viewFloats(): void {
    this.#floats = new Float32Array(this.#memory.buffer, this.#layout.floats, this.#dims);
  }

  #layoutFor(capacity: number): Layout {
    const query = 0;
    const queryBits = query + this.#stride * 2;
    const tables = queryBits + this.#blockBytes;
    const floats = tables + this.#groups * 16;
    const queryCode = floats + this.#stride * 4;
    // Rows on cache lines of their own: a row read alone then touches six lines, not seven.
    const out = roundUp(queryCode + this.#stride, 64);
    const ids = out + capacity * 4;
    // The bits and the codes each from a page of their own, where a saved file of them may be mapped (see restore).
    const bits = roundUp(ids + capacity * 4, MAPPING_ALIGN);
    const codes = roundUp(bits + capacity * this.#bitStride, MAPPING_ALIGN);
    return {
      capacity,
      query,
      queryBits,
      tables,
      floats,
      queryCode,
      out,
      ids,
      bits,
      codes,
      end: codes + capacity * this.#stride,
    };
  }
}

function roundUp(value: number, step: number): number {
  return Math.ceil(value / step) * step;
}
