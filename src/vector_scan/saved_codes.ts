/**
 * Vector codes as a file keeps them and a load takes them back (see `VectorCodes.parts` and `VectorCodes.restore`; the
 * file's layout is `src/segments/codes_files.ts`'s).
 */

/** The state of `VectorCodes` in parts (see `VectorCodes.parts`). */
export interface CodesParts {
  dims: number;
  rows: number;
  /** Each slot's code length's inverse, and 1 where the slot holds a vector. */
  inverseNorms: Float32Array;
  live: Uint8Array;
  /** The sign bits' blocks for the rows, and the rows' codes. */
  bits: Uint8Array;
  codes: Uint8Array;
}

/** Parts that a load found saved: the small ones read, and the large ones placed in the memory by the saver's reader. */
export interface SavedCodes extends Omit<CodesParts, "bits" | "codes"> {
  /** Bytes of the saved bits and codes. */
  bitsBytes: number;
  codesBytes: number;
  /**
   * Puts the saved bits or codes into `memory` from `at` on, which is on a page and has room for them padded to whole
   * pages, by mapping or copying them; false when it cannot.
   */
  place(part: "bits" | "codes", memory: WebAssembly.Memory, at: number): boolean;
}
