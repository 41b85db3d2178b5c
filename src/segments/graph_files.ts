/**
 * The files a load reads a snapshot's HNSW graph from: USearch loads a graph from a file, not from bytes in memory. By
 * default the graph's bytes go to a temporary file that is removed once loaded; this host's snapshot copies (see
 * `SegmentFiles`) keep it instead, beside the copy, so that the next load of that version reads the graph from there
 * and skips its bytes in the snapshot.
 */

/** A file being written with a snapshot's graph. */
export interface GraphFileDraft {
  path: string;
  /** Called once: with `loaded` when the graph was read from it whole, which may keep it; otherwise it goes. */
  finish(loaded: boolean): void;
}

/** Where a load finds a snapshot's graph as a file, or writes it to one. */
export interface GraphFiles {
  /** The path of a file that holds this snapshot's graph of `bytes` bytes whole, when one is kept. */
  kept(bytes: number): string | undefined;
  /** A new file for the graph's bytes. */
  create(): GraphFileDraft;
}

/** The default: a temporary file per load, removed once loaded. */
export const TEMPORARY_GRAPH_FILES: GraphFiles = {
  kept: () => undefined,
  create: () => {
    const path = temporaryGraphPath();
    return { path, finish: () => removeQuietly(path) };
  },
};

/** Removes a file, if it is there. */
export function removeQuietly(path: string): void {
  try {
    Deno.removeSync(path);
  } catch {
    // Gone already.
  }
}

/**
 * A new temporary file to pass a graph through: in memory-backed /dev/shm where there is one, since writing a large
 * graph to disk slowed a cold start noticeably.
 */
export function temporaryGraphPath(): string {
  let dir: string | undefined;
  try {
    if (Deno.statSync("/dev/shm").isDirectory) dir = "/dev/shm";
  } catch {
    // No /dev/shm: the system's temporary directory.
  }
  return Deno.makeTempFileSync({ prefix: "quire-ann-", dir });
}
