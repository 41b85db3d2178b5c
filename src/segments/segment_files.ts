/**
 * Local copies of index snapshots, in a directory of this host (`SEGMENT_DIR`): a load reads a snapshot from here
 * instead of from the store when the copy of its version is here whole, and otherwise keeps a copy as it reads it from
 * the store. A copy is named by its index and snapshot version, which never change once swapped in, and it is written
 * under a temporary name and renamed when whole, so that a file under a version's name always holds that version,
 * whoever wrote it and whatever process died meanwhile. The store stays the one source of truth: a copy that is missing,
 * of the wrong size or unreadable is read from the store again, and a disk that fails or fills up only means none.
 */
import { join } from "node:path";

/** Bytes a copy is read and written in. */
const READ_BYTES = 1 << 20;
const WRITE_BYTES = 1 << 20;
/** Temporary files older than this were left by a process that died writing them. */
const ABANDONED_AFTER_MS = 60 * 60 * 1000;
const SUFFIX = ".snapshot";
const TEMPORARY = ".tmp-";

/** A copy being written: its bytes as they come, then renamed into place under its version once whole. */
export interface SegmentCopy {
  /** Appends bytes; a write that fails drops the copy, never the caller's work. */
  write(bytes: Uint8Array): Promise<void>;
  /** Renames the copy into place as `versionId`, if it holds exactly `bytes` bytes; drops it otherwise. */
  keep(versionId: string, bytes: number): Promise<void>;
  /** Drops the copy. */
  drop(): Promise<void>;
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
  async begin(indexId: string): Promise<SegmentCopy | undefined> {
    const folder = join(this.#dir, indexId);
    const temporary = join(folder, `${TEMPORARY}${Date.now()}-${crypto.randomUUID()}`);
    let file: Deno.FsFile | undefined;
    try {
      await Deno.mkdir(folder, { recursive: true });
      file = await Deno.open(temporary, { write: true, createNew: true, mode: 0o600 });
    } catch {
      return undefined;
    }
    let written = 0;
    // Bytes gather here and go to the file a MiB at a time: a load hands them on 60 KiB at a time.
    const buffer = new Uint8Array(WRITE_BYTES);
    let buffered = 0;
    const drop = async () => {
      file?.close();
      file = undefined;
      await Deno.remove(temporary).catch(() => {});
    };
    const flush = async () => {
      for (let at = 0; at < buffered;) at += await file!.write(buffer.subarray(at, buffered));
      written += buffered;
      buffered = 0;
    };
    return {
      write: async (bytes) => {
        try {
          for (let at = 0; at < bytes.byteLength && file !== undefined;) {
            const taken = Math.min(bytes.byteLength - at, buffer.byteLength - buffered);
            buffer.set(bytes.subarray(at, at + taken), buffered);
            buffered += taken;
            at += taken;
            if (buffered === buffer.byteLength) await flush();
          }
        } catch {
          await drop();
        }
      },
      keep: async (versionId, bytes) => {
        if (file === undefined) return;
        try {
          await flush();
          if (written !== bytes) return await drop();
          await file.syncData();
          file.close();
          file = undefined;
          await Deno.rename(temporary, this.#path(indexId, versionId));
          await this.prune(indexId, versionId);
        } catch {
          await drop();
        }
      },
      drop,
    };
  }

  /** Removes the copy of one version, e.g. one that did not read. */
  async remove(indexId: string, versionId: string): Promise<void> {
    await Deno.remove(this.#path(indexId, versionId)).catch(() => {});
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
          : keep === undefined || entry.name < `${keep}${SUFFIX}`;
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

  #path(indexId: string, versionId: string): string {
    return join(this.#dir, indexId, `${versionId}${SUFFIX}`);
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

/** A file's bytes in pieces of {@link READ_BYTES}, each a fresh array; the file is closed at the end or on a stop. */
async function* readChunks(path: string): AsyncGenerator<Uint8Array> {
  const file = await Deno.open(path);
  try {
    for (;;) {
      const piece = new Uint8Array(READ_BYTES);
      const read = await file.read(piece);
      if (read === null) return;
      yield piece.subarray(0, read);
    }
  } finally {
    file.close();
  }
}
