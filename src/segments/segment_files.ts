/**
 * Local copies of index snapshots, in a directory of this host (`SEGMENT_DIR`): a load reads a snapshot from here
 * instead of from the store when the copy of its version is here whole, and otherwise keeps a copy as it reads it from
 * the store. A copy is named by its index and snapshot version, which never change once swapped in, and it is written
 * under a temporary name and renamed when whole, so that a file under a version's name always holds that version,
 * whoever wrote it and whatever process died meanwhile. The store stays the one source of truth: a copy that is missing,
 * of the wrong size or unreadable is read from the store again, and a disk that fails or fills up only means none.
 *
 * Beside a version's copy lie what a load derives from it and would otherwise derive again at every load: the HNSW
 * graph as the file USearch reads (`.graph`), the graph's int8 codes and sign bits (`.codes`), and the float16 rows laid
 * out to be mapped (`.rows`). They too are named by version and renamed into place when whole. A snapshot written by
 * this process keeps its rows, codes and graph with its copy (see `segment_copy.ts`), so that no load derives them.
 */
import { join } from "node:path";
import { type GraphFiles, removeQuietly, TEMPORARY_GRAPH_FILES } from "./graph_files.ts";
import { createRowsDraft, readKeptRows, type RowsFiles } from "./rows_files.ts";
import { readSavedCodes } from "./codes_files.ts";
import type { FileMapper } from "../util/file_mapping.ts";
import type { SavedCodes } from "../vector_scan/saved_codes.ts";
import { beginCopy, keepFile, type SegmentCopy } from "./segment_copy.ts";

/** Bytes a copy is read in. */
const READ_BYTES = 1 << 20;
/** Temporary files older than this were left by a process that died writing them. */
const ABANDONED_AFTER_MS = 60 * 60 * 1000;
const SUFFIX = ".snapshot";
const GRAPH_SUFFIX = ".graph";
const CODES_SUFFIX = ".codes";
const ROWS_SUFFIX = ".rows";
const TEMPORARY = ".tmp-";
const PART_SUFFIXES = { snapshot: SUFFIX, rows: ROWS_SUFFIX, codes: CODES_SUFFIX, graph: GRAPH_SUFFIX };

/** Graph files of one snapshot version, whose new one is kept only once the whole snapshot has decoded. */
export interface KeptGraphFiles extends GraphFiles {
  /**
   * Keeps the graph file the load wrote last, if any, when the snapshot `decoded` whole; drops it otherwise. One written
   * before it (from a copy that then failed to decode) is dropped when the next is written.
   */
  settle(decoded: boolean): void;
}

/** Rows files of one snapshot version, whose new one is kept only once the whole snapshot has decoded. */
export interface KeptRowsFiles extends RowsFiles {
  /**
   * Keeps the rows file the load wrote whole, when the snapshot `decoded` whole; drops it otherwise. Resolves once it is
   * in place (or dropped): the caller need not wait, but a closing process should.
   */
  settle(decoded: boolean): Promise<void>;
}

/** The directory of local snapshot copies, one folder per index id. */
export class SegmentFiles {
  readonly #dir: string;

  private constructor(dir: string) {
    this.#dir = dir;
  }

  /**
   * The copies in `dir`, made if it is missing; undefined when the process may not write there (Deno Deploy, a read-only
   * disk), so that it runs without copies.
   */
  static async open(dir: string): Promise<SegmentFiles | undefined> {
    try {
      await Deno.mkdir(dir, { recursive: true });
      const probe = join(dir, `${TEMPORARY}probe-${crypto.randomUUID()}`);
      await Deno.writeFile(probe, new Uint8Array(1));
      await Deno.remove(probe);
      return new SegmentFiles(dir);
    } catch (error) {
      console.warn(`Keeping no local snapshot copies: ${dir} is not writable (${(error as Error).message})`);
      return undefined;
    }
  }

  /**
   * The copy of an index's snapshot version as its chunks, or null unless it is here with exactly `bytes` bytes. The
   * file is open only while the chunks are read: a reader that stops early calls `return()`.
   */
  async read(indexId: string, versionId: string, bytes: number): Promise<AsyncGenerator<Uint8Array> | null> {
    const path = this.#path(indexId, versionId);
    try {
      if ((await Deno.stat(path)).size !== bytes) return null;
    } catch {
      return null;
    }
    return readChunks(path);
  }

  /** Starts a copy of a snapshot of `indexId`; undefined when the folder cannot be made. */
  begin(indexId: string): Promise<SegmentCopy | undefined> {
    return beginCopy({
      temporary: () => this.#temporaryPath(indexId),
      final: (versionId, part) => this.#path(indexId, versionId, PART_SUFFIXES[part]),
      kept: (versionId) => this.prune(indexId, versionId),
    });
  }

  /**
   * Where a load of an index's snapshot version finds its graph as a file, and keeps the one it writes once the whole
   * snapshot has decoded.
   */
  graphFiles(indexId: string, versionId: string): KeptGraphFiles {
    const path = this.#path(indexId, versionId, GRAPH_SUFFIX);
    let copy: string | undefined;
    return {
      kept: (bytes) => {
        try {
          return Deno.statSync(path).size === bytes ? path : undefined;
        } catch {
          return undefined;
        }
      },
      // The graph is written where a load without copies writes it, and copied here once it has loaded, so that a
      // disk that fails or fills up only means no copy.
      create: () => {
        const draft = TEMPORARY_GRAPH_FILES.create();
        return {
          path: draft.path,
          finish: (loaded) => {
            if (loaded) {
              if (copy !== undefined) removeQuietly(copy);
              copy = this.#syncedCopy(indexId, draft.path);
            }
            draft.finish(loaded);
          },
        };
      },
      settle: (decoded) => {
        if (copy === undefined) return;
        try {
          if (decoded) Deno.renameSync(copy, path);
          else removeQuietly(copy);
        } catch {
          removeQuietly(copy);
        }
        copy = undefined;
      },
    };
  }

  /**
   * Where a load of an index's snapshot version finds its rows as a file to map, and keeps the one it writes once the
   * whole snapshot has decoded.
   */
  rowsFiles(indexId: string, versionId: string): KeptRowsFiles {
    const path = this.#path(indexId, versionId, ROWS_SUFFIX);
    let whole: string | undefined;
    return {
      kept: (rows, stride) => readKeptRows(path, rows, stride),
      // One written before (from a copy that then failed to decode) goes when the next is written.
      create: (rows, stride) => {
        if (whole !== undefined) removeQuietly(whole);
        const draft = this.#temporaryPath(indexId);
        return createRowsDraft(draft, rows, stride, (written) => whole = written ? draft : undefined);
      },
      settle: async (decoded) => {
        if (whole === undefined) return;
        if (decoded) await keepFile(whole, path);
        else removeQuietly(whole);
      },
    };
  }

  /**
   * The codes that a load of an index's snapshot version kept (see {@link keepCodes}), if any: their bits and codes
   * mapped by `mapper` where there is one, else read.
   */
  savedCodes(indexId: string, versionId: string, mapper?: FileMapper): SavedCodes | undefined {
    return readSavedCodes(this.#path(indexId, versionId, CODES_SUFFIX), mapper);
  }

  /**
   * Keeps the codes a load of an index's snapshot version derived (as `codesFileBytes` lays them out), for the next
   * load of that version.
   */
  async keepCodes(indexId: string, versionId: string, codes: Uint8Array): Promise<void> {
    let draft: string | undefined;
    try {
      draft = this.#temporaryPath(indexId);
      await Deno.writeFile(draft, codes, { mode: 0o600 });
    } catch {
      if (draft !== undefined) await Deno.remove(draft).catch(() => {});
      return;
    }
    await keepFile(draft, this.#path(indexId, versionId, CODES_SUFFIX));
  }

  /** Removes the copy of one version and what loads derived from it, e.g. a copy that did not read. */
  async remove(indexId: string, versionId: string): Promise<void> {
    for (const suffix of [SUFFIX, GRAPH_SUFFIX, CODES_SUFFIX, ROWS_SUFFIX]) {
      await Deno.remove(this.#path(indexId, versionId, suffix)).catch(() => {});
    }
  }

  /**
   * Removes an index's copies of versions older than `keep` (all of them when undefined: a newer one may have come
   * from another process meanwhile), and the temporary files that a dead process left; the folder too when `keep` is
   * undefined.
   */
  async prune(indexId: string, keep?: string, now = Date.now()): Promise<void> {
    const folder = join(this.#dir, indexId);
    try {
      for await (const entry of Deno.readDir(folder)) {
        const stale = entry.name.startsWith(TEMPORARY)
          ? now - Number(entry.name.slice(TEMPORARY.length).split("-")[0]) >= ABANDONED_AFTER_MS
          : keep === undefined || entry.name.split(".")[0]! < keep;
        if (stale) await Deno.remove(join(folder, entry.name)).catch(() => {});
      }
      if (keep === undefined) await Deno.remove(folder).catch(() => {});
    } catch {
      // No folder: nothing to prune.
    }
  }

  /**
   * Prunes every index's folder down to its current version, which `current` reads from the store (undefined for an
   * index that has no snapshot, or is gone).
   */
  async sweep(current: (indexId: string) => Promise<string | undefined>): Promise<void> {
    const ids: string[] = [];
    try {
      for await (const entry of Deno.readDir(this.#dir)) if (entry.isDirectory) ids.push(entry.name);
    } catch {
      // The directory went away: no copies.
    }
    for (const indexId of ids) await this.prune(indexId, await current(indexId));
  }

  #path(indexId: string, versionId: string, suffix = SUFFIX): string {
    return join(this.#dir, indexId, `${versionId}${suffix}`);
  }

  /** A copy of the file at `source` under a temporary name in an index's folder, on the disk; none if it fails. */
  #syncedCopy(indexId: string, source: string): string | undefined {
    let draft: string | undefined;
    try {
      draft = this.#temporaryPath(indexId);
      Deno.copyFileSync(source, draft);
      using file = Deno.openSync(draft, { write: true });
      file.syncDataSync();
      return draft;
    } catch {
      if (draft !== undefined) removeQuietly(draft);
      return undefined;
    }
  }

  /** A new temporary name in an index's folder, which is made if missing. */
  #temporaryPath(indexId: string): string {
    const folder = join(this.#dir, indexId);
    Deno.mkdirSync(folder, { recursive: true });
    return join(folder, `${TEMPORARY}${Date.now()}-${crypto.randomUUID()}`);
  }
}

/**
 * The chunks as they come, each written to `copy` before it is handed on (a chunk may hold only until the next one is
 * asked for).
 */
export async function* copying(chunks: AsyncIterable<Uint8Array>, copy: SegmentCopy): AsyncGenerator<Uint8Array> {
  for await (const chunk of chunks) {
    await copy.write(chunk);
    yield chunk;
  }
}

/**
 * A file's bytes in pieces of up to {@link READ_BYTES}, each of which holds until the next is asked for: the next piece
 * is read into a second buffer while the caller decodes this one, so that the disk and the decoding overlap and two
 * buffers serve the whole file. The file is closed at the end or on a stop.
 */
async function* readChunks(path: string): AsyncGenerator<Uint8Array> {
  const file = await Deno.open(path);
  const buffers = [new Uint8Array(READ_BYTES), new Uint8Array(READ_BYTES)];
  let reading: Promise<number | null> | undefined = file.read(buffers[0]!);
  try {
    for (let piece = 0;; piece++) {
      const read = await reading;
      reading = undefined;
      if (read === null) return;
      const chunk = buffers[piece % 2]!.subarray(0, read);
      reading = file.read(buffers[(piece + 1) % 2]!);
      // A read that fails while the caller decodes is thrown at the next piece, not as an unhandled rejection.
      reading.catch(() => {});
      yield chunk;
    }
  } finally {
    // A read still under way ends before the file closes.
    await reading?.catch(() => null);
    file.close();
  }
}
