/**
 * Builds an index's search state from storage: the snapshot with the change log replayed on top, or, when there is
 * no snapshot (or the log has a gap), the document records themselves.
 */
import { listDocs } from "../storage/doc_records.ts";
import { type IndexRecord, readIndexRecord } from "../storage/index_records.ts";
import { readLogTail } from "../storage/change_log.ts";
import { readSnapshot, type SnapshotPointer, SnapshotReplacedError } from "../storage/snapshot_store.ts";
import type { AnnGraphs } from "../search/ann_graphs.ts";
import { SearchIndex } from "../search/search_index.ts";
import { decodeSearchSnapshot, type SnapshotDecodeOptions } from "../search/search_snapshot_codec.ts";
import { DEFAULT_LANGUAGE } from "../fulltext/languages.ts";
import { copying, type SegmentFiles } from "../segments/segment_files.ts";
import { FileMapper } from "../util/file_mapping.ts";
import { codesFileBytes } from "../segments/codes_files.ts";

/** Reads of the document records before settling for one that a concurrent write may have overlapped. */
const MAX_LIST_ATTEMPTS = 3;

/** A loaded search state and how much of it came from the change log rather than a snapshot. */
export interface LoadedIndex {
  index: SearchIndex;
  /** Bytes of log replayed; infinite when there was no usable snapshot at all. */
  logBytes: number;
  /** Bytes of the snapshot read, 0 without one. */
  snapshotBytes: number;
  /** Whether the snapshot came from this host's copy rather than the store. */
  local?: boolean;
  /** The version of a snapshot found but not readable (of an older format), which the next one must replace. */
  unreadableVersion?: string | undefined;
}

/** Where a load gets HNSW graphs from; without `graphs` the loaded index scans vectors exactly. */
export interface LoadOptions {
  graphs?: AnnGraphs | undefined;
  /** The snapshot pointer, when the caller has just read it. */
  pointer?: SnapshotPointer | null;
  /** This host's copies of snapshots: read instead of the store when there, and kept when read from it. */
  segments?: SegmentFiles | undefined;
  /**
   * Hears of the writes of what a load derived (rows and codes), which go on after it: a process that closes waits for
   * them, so that its next start maps what this one derived.
   */
  track?: ((writing: Promise<void>) => void) | undefined;
}

/** Loads the search state of `record`'s index at its revision or later. */
export async function loadSearchIndex(
  kv: Deno.Kv,
  record: IndexRecord,
  options: LoadOptions = {},
): Promise<LoadedIndex> {
  const snapshot = await readSnapshot(
    kv,
    record.id,
    async ({ pointer, chunks }) => ({ pointer, ...await decodeVersion(record, pointer, chunks, options) }),
    options.pointer,
  );
  if (snapshot !== null && snapshot.index !== null) {
    const { index, local, pointer: { bytes: snapshotBytes } } = snapshot;
    if (index.revision >= record.revision) return { index, logBytes: 0, snapshotBytes, local };
    // The replayed documents reach the graph later, in the background: a cold start does not wait for them.
    const logBytes = await replayLog(kv, record.id, index, record.revision);
    if (logBytes !== null) return { index, logBytes, snapshotBytes, local };
  }
  const index = await readAllDocs(kv, record, options.graphs);
  const unreadableVersion = snapshot !== null && snapshot.index === null ? snapshot.pointer.versionId : undefined;
  return { index, logBytes: Infinity, snapshotBytes: 0, unreadableVersion };
}

/**
 * Brings `index` from its revision to `to` by replaying the change log's entries between them, their documents left
 * waiting for the graph; the log's bytes replayed, or null, the index unchanged, when the log no longer has them all.
 */
export async function replayLog(kv: Deno.Kv, indexId: string, index: SearchIndex, to: number): Promise<number | null> {
  const from = index.revision;
  const tail = await readLogTail(kv, indexId, from, to);
  if (tail === null) return null;
  tail.changes.forEach((changes, i) => index.apply(changes, { revision: from + i + 1, deferGraph: true }));
  return tail.bytes;
}

/** Reads every document record, again while a write lands during the read. */
async function readAllDocs(kv: Deno.Kv, record: IndexRecord, graphs?: AnnGraphs): Promise<SearchIndex> {
  let revision = record.revision;
  for (let attempt = 1;; attempt++) {
    const index = new SearchIndex({ revision: record.revision, graphs, language: record.language });
    const batch = [];
    for await (const [id, doc] of listDocs(kv, record.id)) {
      batch.push({ id, doc, previousParts: 0 });
      // The graph is built afterwards, in batches between requests (see IndexStates).
      if (batch.length === 1000) index.apply(batch.splice(0), { deferGraph: true });
    }
    index.apply(batch, { deferGraph: true });
    const after = await readIndexRecord(kv, record.projectId, record.name);
    const unchanged = after?.id !== record.id || after.revision === revision;
    if (unchanged || attempt === MAX_LIST_ATTEMPTS) return index;
    revision = after!.revision;
  }
}

/**
 * Decodes a snapshot version from this host's copy when it is there whole, else from the store's `chunks`, keeping a
 * copy of them as they pass. A copy that does not read is removed, and the store's bytes read instead.
 */
async function decodeVersion(
  record: IndexRecord,
  pointer: SnapshotPointer,
  chunks: AsyncIterable<Uint8Array>,
  { segments, graphs, track }: LoadOptions,
): Promise<{ index: SearchIndex | null; local: boolean }> {
  const language = record.language ?? DEFAULT_LANGUAGE;
  const { versionId } = pointer;
  // Kept codes and graph files serve only a process that has graphs (not the wasm backend's).
  const derivedFiles = graphs === undefined ? undefined : segments;
  // Rows are kept as a file to map only where this process can map one; kept codes are mapped there too, else read.
  const mapper = segments === undefined ? undefined : FileMapper.get();
  const codes = derivedFiles?.savedCodes(record.id, versionId, mapper);
  const graphFiles = derivedFiles?.graphFiles(record.id, versionId);
  const rowsFiles = mapper === undefined ? undefined : segments!.rowsFiles(record.id, versionId);
  const options = {
    graphs,
    language,
    codes,
    graphFiles,
    rowsFiles: rowsFiles && { files: rowsFiles, mapper: mapper! },
  };
  let decoded: { index: SearchIndex | null; local: boolean } | undefined;
  try {
    decoded = await decodeFromCopy(record.id, pointer, segments, options) ??
      await decodeFromStore(record.id, pointer, chunks, segments, options);
  } finally {
    graphFiles?.settle((decoded?.index ?? null) !== null);
    const keepingRows = rowsFiles?.settle((decoded?.index ?? null) !== null);
    if (keepingRows !== undefined) track?.(keepingRows);
  }
  // What the load derived from the snapshot is kept for the next load of this version, before any write changes it.
  const derived = derivedFiles === undefined ? undefined : decoded.index?.derivedCodes();
  if (derived !== undefined) track?.(derivedFiles!.keepCodes(record.id, versionId, codesFileBytes(derived)));
  return decoded;
}

/** Decodes a snapshot version from this host's copy, when it is there whole; removes a copy that does not read. */
async function decodeFromCopy(
  indexId: string,
  pointer: SnapshotPointer,
  segments: SegmentFiles | undefined,
  options: SnapshotDecodeOptions,
): Promise<{ index: SearchIndex; local: true } | undefined> {
  const copied = await segments?.read(indexId, pointer.versionId, pointer.bytes);
  if (copied === undefined || copied === null) return undefined;
  try {
    return { index: await decodeSearchSnapshot(copied, options), local: true };
  } catch (error) {
    console.warn("Reading the store's snapshot instead of a local copy that did not read:", (error as Error).message);
    // The decoder stopped part way: the copy's file closes before it is removed.
    await copied.return(undefined);
    await segments!.remove(indexId, pointer.versionId);
    return undefined;
  }
}

/** Decodes a snapshot version from the store's `chunks`, keeping a copy of them as they pass. */
async function decodeFromStore(
  indexId: string,
  pointer: SnapshotPointer,
  chunks: AsyncIterable<Uint8Array>,
  segments: SegmentFiles | undefined,
  options: SnapshotDecodeOptions,
): Promise<{ index: SearchIndex | null; local: false }> {
  const copy = await segments?.begin(indexId);
  try {
    const index = await decodeOrNull(copy === undefined ? chunks : copying(chunks, copy), options);
    if (index !== null) await copy?.keep(pointer.versionId, pointer.bytes);
    return { index, local: false };
  } finally {
    await copy?.drop();
  }
}

/**
 * The decoded snapshot, or null for one this version cannot read (an older format): then the records are read. A
 * snapshot replaced during the read is not unreadable: {@link readSnapshot} reads it again.
 */
async function decodeOrNull(
  chunks: AsyncIterable<Uint8Array>,
  options: SnapshotDecodeOptions,
): Promise<SearchIndex | null> {
  try {
    return await decodeSearchSnapshot(chunks, options);
  } catch (error) {
    if (error instanceof SnapshotReplacedError) throw error;
    console.warn("Ignoring an unreadable snapshot; reading the document records instead:", (error as Error).message);
    return null;
  }
}
