/**
 * A graph's int8 codes and sign bits as a file laid out to be mapped into their memory (see `FileMapper`): a header
 * page, the sign bits' blocks from the next page on, padded with zeros to a whole page, the codes likewise, then each
 * slot's inverse code length (float32) and whether it holds a vector (a byte). A load maps the bits and the codes where
 * the codes' memory keeps them, or copies them from the file where it cannot map, and reads the rest.
 *
 * Header (little-endian u32s): the format, the dimensions, the rows, the bytes of the bits, the bytes of the codes.
 */
import type { CodesParts, SavedCodes } from "../vector_scan/saved_codes.ts";
import { type FileMapper, MAPPING_ALIGN, paddedToPages } from "../util/file_mapping.ts";
import { readWhole, writeWhole } from "../util/whole_file_io.ts";
import { FileDraft } from "./file_draft.ts";

/** Format 1 packed the parts one after another; it is refused, and the codes are derived again. */
const FORMAT = 2;
const HEADER_WORDS = 5;

/** Where each part lies in a file of parts of these sizes. */
function partsAt(rows: number, bitsBytes: number, codesBytes: number) {
  const bits = MAPPING_ALIGN;
  const codes = bits + paddedToPages(bitsBytes);
  const inverseNorms = codes + paddedToPages(codesBytes);
  const live = inverseNorms + rows * 4;
  return { bits, codes, inverseNorms, live, end: live + rows };
}

/** The file's bytes for codes in `parts`: a copy, so that it holds when the codes change. */
export function codesFileBytes(parts: CodesParts): Uint8Array {
  const at = partsAt(parts.rows, parts.bits.byteLength, parts.codes.byteLength);
  const file = new Uint8Array(at.end);
  new Uint32Array(file.buffer, 0, HEADER_WORDS).set([
    FORMAT,
    parts.dims,
    parts.rows,
    parts.bits.byteLength,
    parts.codes.byteLength,
  ]);
  file.set(parts.bits, at.bits);
  file.set(parts.codes, at.codes);
  file.set(new Uint8Array(parts.inverseNorms.buffer, parts.inverseNorms.byteOffset, parts.rows * 4), at.inverseNorms);
  file.set(parts.live, at.live);
  return file;
}

/** Rows of codes as a snapshot encodes them, for a {@link CodesFileDraft}: the parts of those rows alone. */
export interface CodesChunk {
  /** Where the rows' bits and codes start among all rows' (see `VectorCodes.partBytes`). */
  bitsAt: number;
  codesAt: number;
  bits: Uint8Array;
  codes: Uint8Array;
  inverseNorms: Float32Array;
  live: Uint8Array;
}

/** What a codes file holds: `rows` rows of `dims` dimensions, whose bits and codes take `bytes` in all. */
export interface CodesFileShape {
  dims: number;
  rows: number;
  bytes: { bits: number; codes: number };
}

/** A codes file written a chunk of rows at a time, as a snapshot's rows are encoded. */
export interface CodesFileDraft {
  /** Writes the chunk of rows starting at row `from`; a write that fails only means no file. */
  write(from: number, chunk: CodesChunk): void;
  /** Ends the file, when every row was written (`whole`); drops it otherwise. Called once. */
  finish(whole: boolean): void;
}

/**
 * A draft codes file at `path` of the given shape; `finished` is told whether it was written whole. The padding between
 * parts is left as holes, which read as zeros.
 */
export function createCodesDraft(
  path: string,
  shape: CodesFileShape,
  finished: (whole: boolean) => void,
): CodesFileDraft {
  const { dims, rows, bytes } = shape;
  const at = partsAt(rows, bytes.bits, bytes.codes);
  const inverseNorms = new Float32Array(rows);
  const live = new Uint8Array(rows);
  const draft = new FileDraft(path, finished);
  const writeAt = (file: Deno.FsFile, offset: number, data: Uint8Array) => {
    file.seekSync(offset, Deno.SeekMode.Start);
    writeWhole(file, data);
  };
  draft.write((file) =>
    writeAt(file, 0, new Uint8Array(new Uint32Array([FORMAT, dims, rows, bytes.bits, bytes.codes]).buffer))
  );
  return {
    write: (from, chunk) =>
      draft.write((file) => {
        writeAt(file, at.bits + chunk.bitsAt, chunk.bits);
        writeAt(file, at.codes + chunk.codesAt, chunk.codes);
        inverseNorms.set(chunk.inverseNorms, from);
        live.set(chunk.live, from);
      }),
    finish: (whole) =>
      draft.finish(whole, (file) => {
        writeAt(file, at.inverseNorms, new Uint8Array(inverseNorms.buffer));
        writeAt(file, at.live, live);
      }),
  };
}

/**
 * The codes saved in the file at `path`, if it is one of this format and size: their bits and codes are mapped from it
 * by `mapper`, or read from it without one or where mapping fails.
 */
export function readSavedCodes(path: string, mapper?: FileMapper): SavedCodes | undefined {
  try {
    using file = Deno.openSync(path);
    const header = new Uint32Array(HEADER_WORDS);
    const size = file.statSync().size;
    if (size < MAPPING_ALIGN || !readWhole(file, new Uint8Array(header.buffer))) return undefined;
    const [format, dims, rows, bitsBytes, codesBytes] = header as unknown as number[];
    if (format !== FORMAT) return undefined;
    const at = partsAt(rows!, bitsBytes!, codesBytes!);
    if (size !== at.end) return undefined;
    const tail = new Uint8Array(at.end - at.inverseNorms);
    file.seekSync(at.inverseNorms, Deno.SeekMode.Start);
    if (!readWhole(file, tail)) return undefined;
    const place = (part: "bits" | "codes", memory: WebAssembly.Memory, into: number) => {
      const [offset, bytes] = part === "bits" ? [at.bits, bitsBytes!] : [at.codes, codesBytes!];
      if (bytes === 0 || mapper?.mapInto(memory, into, path, offset, paddedToPages(bytes))) return true;
      return copyInto(path, offset, new Uint8Array(memory.buffer, into, bytes));
    };
    return {
      dims: dims!,
      rows: rows!,
      inverseNorms: new Float32Array(tail.buffer, 0, rows!),
      live: tail.subarray(rows! * 4),
      bitsBytes: bitsBytes!,
      codesBytes: codesBytes!,
      place,
    };
  } catch {
    return undefined;
  }
}

/** Reads `into` from the file at `path` from `offset` on; false when it ends first or cannot be read. */
function copyInto(path: string, offset: number, into: Uint8Array): boolean {
  try {
    using file = Deno.openSync(path);
    file.seekSync(offset, Deno.SeekMode.Start);
    return readWhole(file, into);
  } catch {
    return false;
  }
}
