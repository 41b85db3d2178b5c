/** The WebAssembly scan kernels of `kernels.wat`, compiled once and instantiated over a memory of the caller's. */
import { KERNELS_WASM_BASE64 } from "./kernels_wasm.ts";

/** The kernels, over one memory; addresses and lengths are in bytes of it, rows in its own `stride`. */
export interface ScanKernels {
  /** out[i] = row i of the int8 `codes` · the int16 `query`, for `rows` rows. */
  dots(codes: number, rows: number, stride: number, query: number, out: number): void;
  /** out[i] = row ids[i] of the int8 `codes` · the int16 `query`, for `count` int32 ids. */
  dotsAt(codes: number, ids: number, count: number, stride: number, query: number, out: number): void;
  /**
   * out[r] = the weighted distance of row r of the sign bits' `blocks` (32 rows each) from the query, for `count` blocks:
   * the sum over the rows' `groups` groups of four bits of the query's 16-byte table for each group at the row's bits.
   */
  weighted(blocks: number, count: number, groups: number, tables: number, out: number): void;
  /** Lists at `ids` the rows whose int32 distance is below `cut`, and the first `ties` at it; returns how many. */
  within(distances: number, rows: number, cut: number, ties: number, ids: number): number;
  /** out[i] (float64) = row ids[i] of the float16 `rows` · the float64 `query`, for `count` int32 ids. */
  halfDotsAt(rows: number, ids: number, count: number, stride: number, query: number, out: number): void;
  /**
   * Writes the float32 row at `floats` (zeros past its dimensions) times `scale` as float16 at `row`, `stride` bytes,
   * rounded to nearest; returns the sum of the squares of the halves written.
   */
  toHalves(floats: number, stride: number, scale: number, row: number): number;
  /** The sum of the squares of the float16 row at `row`, `stride` bytes, added up as {@link toHalves} adds them. */
  halfSquares(row: number, stride: number): number;
  /** out[i] (float64) = {@link halfSquares} of row i of the float16 `rows`, `stride` bytes each, for `count` rows. */
  halfSquaresOf(rows: number, count: number, stride: number, out: number): void;
  /** Writes the float16 row at `row`, `stride` bytes, as float32 at `floats`. */
  fromHalves(row: number, stride: number, floats: number): void;
  /**
   * Writes the float32 row at `floats` (`stride` floats, zeros past its dimensions) as int8 codes at `code`, scaled to
   * its largest component, and their sign bits as row `row` of the block at `block`; returns the sum of the codes'
   * squares.
   */
  quantize(floats: number, stride: number, code: number, block: number, row: number): number;
}

/** A WebAssembly memory's page. */
const PAGE_BYTES = 65_536;
/** The most pages a memory of 32-bit addresses holds: 4 GiB. */
const MAX_PAGES = 65_536;

/** A shared memory of at least `bytes`, which may grow in place to 4 GiB; throws where the runtime gives none. */
export function sharedMemory(bytes: number): WebAssembly.Memory {
  return new WebAssembly.Memory({ initial: Math.ceil(bytes / PAGE_BYTES), maximum: MAX_PAGES, shared: true });
}

/** Grows `memory` in place to at least `bytes`. */
export function growMemory(memory: WebAssembly.Memory, bytes: number): void {
  const pages = Math.ceil(bytes / PAGE_BYTES) - memory.buffer.byteLength / PAGE_BYTES;
  if (pages > 0) memory.grow(pages);
}

let compiled: WebAssembly.Module | undefined;

/** The kernels over `memory`. */
export function scanKernels(memory: WebAssembly.Memory): ScanKernels {
  compiled ??= new WebAssembly.Module(Uint8Array.from(atob(KERNELS_WASM_BASE64), (char) => char.charCodeAt(0)));
  const instance = new WebAssembly.Instance(compiled, { quire: { memory } });
  return instance.exports as unknown as ScanKernels;
}
