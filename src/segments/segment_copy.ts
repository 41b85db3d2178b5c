/**
 * One local copy of a snapshot being written (see `SegmentFiles.begin`): its bytes as they come, under a temporary name,
 * renamed into place under its version once whole. A snapshot that this process encodes also hands the copy the files
 * a load of it would otherwise derive (its float16 rows laid out to be mapped, its graph's int8 codes, and its HNSW
 * graph as USearch reads it), which are renamed into place beside it, so that a load of the copy maps them at once.
 */
import { createRowsDraft, type RowsFileDraft } from "./rows_files.ts";
import { type CodesFileDraft, type CodesFileShape, createCodesDraft } from "./codes_files.ts";
import { removeQuietly } from "./graph_files.ts";

/** Bytes gather this much before they go to the file: a load hands them on 60 KiB at a time. */
const WRITE_BYTES = 1 << 20;

/** A copy being written: its bytes as they come, then renamed into place under its version once whole. */
export interface SegmentCopy {
  /** Appends bytes; a write that fails drops the copy, never the caller's work. */
  write(bytes: Uint8Array): Promise<void>;
  /** A file for the snapshot's `rows` float16 rows of `stride` bytes, kept beside the copy when written whole. */
  rows(rows: number, stride: number): RowsFileDraft;
  /**
   * A file for the int8 codes and sign bits of the snapshot's `rows` rows, as a load would derive them for its graph,
   * kept beside the copy when written whole.
   */
  codes(shape: CodesFileShape): CodesFileDraft;
  /** Takes a copy of the file that holds the snapshot's graph, to keep beside the copy. */
  graph(path: string): Promise<void>;
  /**
   * Renames the copy into place as `versionId`, and the files beside it, if it holds exactly `bytes` bytes; drops it
   * otherwise. Whether the copy was kept.
   */
  keep(versionId: string, bytes: number): Promise<boolean>;
  /** Drops the copy, and the files beside it unless kept. */
  drop(): Promise<void>;
}

/** Where a copy's files go: new temporary names, each kept by renaming it to its version's name. */
export interface CopyPlaces {
  temporary(): string;
  /** The path of the version's copy (`.snapshot`), rows (`.rows`), codes (`.codes`) or graph (`.graph`). */
  final(versionId: string, part: "snapshot" | Sidecar): string;
  /** Called once a version's copy is in place: e.g. removes older versions. */
  kept(versionId: string): Promise<void>;
}

/** The files kept beside a copy. */
type Sidecar = "rows" | "codes" | "graph";
const SIDECARS: Sidecar[] = ["rows", "codes", "graph"];

/** Starts a copy at a new temporary name of `places`; undefined when its file cannot be made. */
export async function beginCopy(places: CopyPlaces): Promise<SegmentCopy | undefined> {
  let temporary = "";
  let file: Deno.FsFile | undefined;
  try {
    temporary = places.temporary();
    file = await Deno.open(temporary, { write: true, createNew: true, mode: 0o600 });
  } catch {
    return undefined;
  }
  let written = 0;
  const buffer = new Uint8Array(WRITE_BYTES);
  let buffered = 0;
  /** The rows, codes and graph files, by their temporary names, once whole. */
  const sidecars: Partial<Record<Sidecar, string>> = {};
  const dropSidecars = () => {
    for (const part of SIDECARS) {
      const path = sidecars[part];
      if (path !== undefined) removeQuietly(path);
      delete sidecars[part];
    }
  };
  const drop = async () => {
    file?.close();
    file = undefined;
    await Deno.remove(temporary).catch(() => {});
    dropSidecars();
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
    rows: (rows, stride) => {
      const draft = places.temporary();
      return createRowsDraft(draft, rows, stride, (whole) => {
        if (whole) sidecars.rows = draft;
      });
    },
    codes: (shape) => {
      const draft = places.temporary();
      return createCodesDraft(draft, shape, (whole) => {
        if (whole) sidecars.codes = draft;
      });
    },
    graph: async (path) => {
      let draft: string | undefined;
      try {
        draft = places.temporary();
        await Deno.copyFile(path, draft);
        sidecars.graph = draft;
      } catch {
        if (draft !== undefined) removeQuietly(draft);
      }
    },
    keep: async (versionId, bytes) => {
      if (file === undefined) return false;
      try {
        await flush();
        if (written !== bytes) {
          await drop();
          return false;
        }
        await file.syncData();
        file.close();
        file = undefined;
        // What lies beside the copy goes into place first: a copy in place is read with whatever lies beside it.
        for (const part of SIDECARS) {
          const draft = sidecars[part];
          if (draft === undefined) continue;
          delete sidecars[part];
          await keepFile(draft, places.final(versionId, part));
        }
        await Deno.rename(temporary, places.final(versionId, "snapshot"));
        await places.kept(versionId);
        return true;
      } catch {
        await drop();
        return false;
      }
    },
    drop,
  };
}

/** Renames a written temporary file into place once its bytes are on the disk; removes it if that fails. */
export async function keepFile(draft: string, path: string): Promise<void> {
  try {
    using file = await Deno.open(draft, { write: true });
    await file.syncData();
    await Deno.rename(draft, path);
  } catch {
    await Deno.remove(draft).catch(() => {});
  }
}
