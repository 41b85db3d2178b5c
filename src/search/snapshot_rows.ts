/**
 * A snapshot's vector rows as its encoding writes them: as records of the snapshot, and, where the snapshot's copy on
 * this host takes them (see `SegmentCopy`), to files beside it that a load maps rather than derives: the float16 rows
 * with their lengths, and for an index with a graph, the int8 codes and sign bits that the graph's scans read, written
 * from the rows exactly as a load would write them.
 */
import type { ByteWriter } from "../util/byte_codec.ts";
import type { SegmentCopy } from "../segments/segment_copy.ts";
import { VectorCodes } from "../vector_scan/vector_codes.ts";
import type { SnapshotView } from "./snapshot_view.ts";

/**
 * Files that an encoding writes beside the snapshot, for a load of it to map rather than derive: the rows, the codes,
 * and, once the whole snapshot is encoded, a copy of its graph's file (see `SegmentCopy`).
 */
export type SnapshotSidecars = Pick<SegmentCopy, "rows" | "codes" | "graph">;

/** How a snapshot's rows are written. */
export interface RowsWriting {
  /** Bytes per row as the snapshot stores them. */
  rowBytes: number;
  /** Rows per record: a multiple of 32 (a block of sign bits). */
  perRecord: number;
  /** Per row, 1 where a document holds it: given where the codes are written. */
  held?: Uint8Array | undefined;
  sidecars?: SnapshotSidecars | undefined;
}

/** Writes the view's vector rows, a record per step, and to files beside the snapshot where its sidecars take them. */
export function* writeRows(view: SnapshotView, out: ByteWriter, writing: RowsWriting): Generator<void> {
  const { rowBytes, perRecord, held, sidecars } = writing;
  const rowsDraft = view.halfRows ? sidecars?.rows(view.rows, rowBytes) : undefined;
  const lengths = rowsDraft === undefined ? undefined : new Float64Array(view.rows);
  const codes = held === undefined ? undefined : new CodesOfRows(view.dims, rowBytes);
  const codesDraft = codes && sidecars?.codes({ dims: view.dims, rows: view.rows, bytes: codes.bytes(view.rows) });
  let finished = false;
  try {
    for (let from = 0; from < view.rows; from += perRecord) {
      yield;
      const count = Math.min(perRecord, view.rows - from);
      const rows = view.rowsOf(from, count, (vector) => storedRow(vector, view.halfRows, rowBytes));
      out.append(rows);
      rowsDraft?.write(rows);
      lengths?.set(view.lengthsOf(from, count), from);
      codesDraft?.write(from, codes!.of(rows, from, count, held!));
    }
    rowsDraft?.finish(lengths);
    codesDraft?.finish(true);
    finished = true;
  } finally {
    if (!finished) {
      rowsDraft?.finish();
      codesDraft?.finish(false);
    }
  }
}

/**
 * A row's bytes as the store keeps it: rows read back from float16 are float16 values, so they narrow again exactly.
 */
function storedRow(vector: Float32Array, halves: boolean, rowBytes: number): Uint8Array {
  if (!halves) return new Uint8Array(vector.slice().buffer);
  const row = new Float16Array(rowBytes / 2);
  row.set(vector);
  return new Uint8Array(row.buffer);
}

/** Writes the codes of a record's float16 rows at a time, in codes of their own whose rows it reuses. */
class CodesOfRows {
  readonly #codes: VectorCodes;
  readonly #dims: number;
  readonly #rowBytes: number;
  readonly #vector: Float32Array;
  /** Rows the last record wrote. */
  #filled = 0;

  constructor(dims: number, rowBytes: number) {
    this.#codes = new VectorCodes(dims);
    this.#dims = dims;
    this.#rowBytes = rowBytes;
    this.#vector = new Float32Array(dims);
  }

  /** The bytes of the bits and the codes of the first `rows` rows. */
  bytes(rows: number): { bits: number; codes: number } {
    return this.#codes.partBytes(rows);
  }

  /**
   * The codes of `count` rows from `from` on, given as float16 `rows`, where `held` says a document holds them; a row
   * that none holds has zero codes, as a load leaves it.
   */
  of(rows: Uint8Array, from: number, count: number, held: Uint8Array) {
    const codes = this.#codes;
    // Rows past `count` that the last record filled are cleared too: their sign bits share a block with these rows'.
    for (let row = 0; row < Math.max(count, this.#filled); row++) {
      if (row >= count || held[from + row] !== 1) {
        codes.clear(row);
        continue;
      }
      this.#vector.set(new Float16Array(rows.buffer, rows.byteOffset + row * this.#rowBytes, this.#dims));
      codes.set(row, this.#vector);
    }
    this.#filled = count;
    const parts = codes.parts();
    const at = this.bytes(from);
    const size = this.bytes(count);
    return {
      bitsAt: at.bits,
      codesAt: at.codes,
      bits: parts.bits.subarray(0, size.bits),
      codes: parts.codes.subarray(0, size.codes),
      inverseNorms: parts.inverseNorms.subarray(0, count),
      live: parts.live.subarray(0, count),
    };
  }
}
