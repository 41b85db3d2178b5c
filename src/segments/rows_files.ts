/**
 * A snapshot's float16 vector rows as a file laid out to be mapped into memory (see `FileMapper`): a header page, the
 * rows exactly as the store keeps them from the next page on, padded with zeros to a whole page, then each row's
 * length as float64. A load that finds one maps its rows instead of copying them out of the snapshot, and reads the
 * lengths instead of computing them; a load that finds none writes one as the rows go by.
 *
 * Header (little-endian u32s): the format, the rows, the bytes per row.
 */
import { MAPPING_ALIGN, paddedToPages } from "../util/file_mapping.ts";
import { FileDraft } from "./file_draft.ts";
import { readWhole, writeWhole } from "../util/whole_file_io.ts";

const FORMAT = 1;
const HEADER_BYTES = 12;
/** The rows start on the second page. */
const ROWS_AT = MAPPING_ALIGN;

/** A rows file that is here whole: where its rows lie, to map, and their lengths, read. */
export interface KeptRows {
  path: string;
  /** Where the rows start in the file, and how many bytes from there to map: whole pages. */
  offset: number;
  mappedBytes: number;
  lengths: Float64Array;
}

/** A rows file being written as a snapshot's rows are read. */
export interface RowsFileDraft {
  /** Appends rows as the snapshot holds them; a write that fails only means no file. */
  write(rows: Uint8Array): void;
  /** Ends the file with the rows' lengths, when every row was written; without them, drops it. Called once. */
  finish(lengths?: Float64Array): void;
}

/** Where a load finds a snapshot's rows as a file to map, or writes one. */
export interface RowsFiles {
  /** The rows file kept for this snapshot, if it is here whole with `rows` rows of `stride` bytes. */
  kept(rows: number, stride: number): KeptRows | undefined;
  /** A new file for `rows` rows of `stride` bytes. */
  create(rows: number, stride: number): RowsFileDraft;
}

/** The rows file at `path`, if it holds exactly `rows` rows of `stride` bytes and their lengths. */
export function readKeptRows(path: string, rows: number, stride: number): KeptRows | undefined {
  try {
    using file = Deno.openSync(path);
    const header = new Uint32Array(HEADER_BYTES / 4);
    const mappedBytes = paddedToPages(rows * stride);
    const lengthsAt = ROWS_AT + mappedBytes;
    const size = file.statSync().size;
    if (size !== lengthsAt + rows * 8 || !readWhole(file, new Uint8Array(header.buffer))) return undefined;
    if (header[0] !== FORMAT || header[1] !== rows || header[2] !== stride) return undefined;
    const lengths = new Float64Array(rows);
    file.seekSync(lengthsAt, Deno.SeekMode.Start);
    if (!readWhole(file, new Uint8Array(lengths.buffer))) return undefined;
    return { path, offset: ROWS_AT, mappedBytes, lengths };
  } catch {
    return undefined;
  }
}

/** A draft rows file at `path` for `rows` rows of `stride` bytes; `finished` is told whether it was written whole. */
export function createRowsDraft(
  path: string,
  rows: number,
  stride: number,
  finished: (whole: boolean) => void,
): RowsFileDraft {
  const draft = new FileDraft(path, finished);
  let written = 0;
  draft.write((file) => {
    const header = new Uint8Array(ROWS_AT);
    new Uint32Array(header.buffer, 0, HEADER_BYTES / 4).set([FORMAT, rows, stride]);
    writeWhole(file, header);
  });
  return {
    write: (bytes) =>
      draft.write((file) => {
        writeWhole(file, bytes);
        written += bytes.byteLength;
      }),
    finish: (lengths) => {
      const whole = lengths !== undefined && written === rows * stride && lengths.length >= rows;
      draft.finish(whole, (file) => {
        writeWhole(file, new Uint8Array(paddedToPages(written) - written));
        writeWhole(file, new Uint8Array(lengths!.buffer, lengths!.byteOffset, rows * 8));
      });
    },
  };
}
