/**
 * The snapshot format of an index's search state: the language of its full-text side, its documents by slot (id,
 * text, metadata as JSON, term count, and their passages' slots, spans and vectors, each stored once: as float16 where
 * the index holds them so, otherwise as float32), the full-text postings and the words typos and prefixes are matched
 * against, the HNSW graph of passages (empty when the index has none) and how searches of the graph were tuned, so that
 * a load rebuilds nothing it can read. It is written in frames of about a MiB (see {@link FrameReader}) that end
 * between records, so that a load decodes each as it arrives and never holds the snapshot whole.
 */
import { ByteReader, ByteWriter } from "../util/byte_codec.ts";
import { writeWhole } from "../util/whole_file_io.ts";
import type { AnnGraphs } from "./ann_graphs.ts";
import type { AnnIndex, GraphFile } from "./ann_index.ts";
import { type GraphFiles, TEMPORARY_GRAPH_FILES } from "../segments/graph_files.ts";
import type { RowsFiles } from "../segments/rows_files.ts";
import { type SnapshotSidecars, writeRows } from "./snapshot_rows.ts";
import type { FileMapper } from "../util/file_mapping.ts";
import type { SavedCodes } from "../vector_scan/saved_codes.ts";
import { StoredContents } from "./stored_contents.ts";
import type { SearchIndexParts } from "./search_index_parts.ts";
import { SearchIndex } from "./search_index.ts";
import { analyzerFor } from "../fulltext/analyzer.ts";
import { TextIndex } from "./text_index.ts";
import { VectorStore } from "./vector_store.ts";
import { halfStride } from "../vector_scan/half_rows.ts";
import type { VectorPlan } from "./vector_plan.ts";
import type { Slices } from "../util/time_slices.ts";
import type { SnapshotView } from "./snapshot_view.ts";
import { beginFrame, endFrame, FrameReader } from "../util/byte_frames.ts";

/**
 * The format's name, the first frame's bytes; formats up to 4, written without frames, begin the same way. From 7 the
 * vectors follow the documents as rows in the store's own layout, which a load copies many rows at a time.
 */
const FORMAT = "quire-search-7";
/** Formats before it that still read: 6 kept each document's vectors with it, and 5 kept them as float32 only. */
const FORMAT_VECTORS_BY_DOC = "quire-search-6";
const FORMAT_FLOAT32_ONLY = "quire-search-5";
/** Vector rows per record: a record is copied whole, and about 768 KiB at 384 dimensions keeps it within a frame's size. */
const ROWS_PER_RECORD = 1024;

/** How much an encoding writes before it ends a frame and hands the bytes on: a snapshot is never held whole. */
const PIECE_BYTES = 1 << 20;

/**
 * Encodes an index's search state as it stands when called, in pieces of about a MiB, each a view that holds until the
 * next one is asked for. With `slices`, the work pauses whenever a slice has used its time, so that requests are
 * answered in between; writes that land meanwhile (or while a consumer awaits between pieces) change the index but not
 * the snapshot (see {@link SnapshotView}). Without, it pauses only where the consumer does. With `sidecars`, its float16
 * rows and its graph are written to files too.
 */
export async function* encodeSearchSnapshot(
  index: SearchIndex,
  slices?: Slices,
  sidecars?: SnapshotSidecars,
): AsyncGenerator<Uint8Array> {
  const view = index.openSnapshotView();
  try {
    // Room for a piece and the record that completes it, so that the buffer is rarely copied as it grows.
    const out = new ByteWriter(PIECE_BYTES + (PIECE_BYTES >> 2));
    let frame = beginFrame(out);
    out.append(new TextEncoder().encode(FORMAT));
    endFrame(out, frame);
    frame = beginFrame(out);
    for (const _record of writeRecords(view, out, sidecars)) {
      if (out.length >= PIECE_BYTES) {
        endFrame(out, frame);
        yield out.drain();
        frame = beginFrame(out);
      }
      if (slices?.due) await slices.next();
    }
    endFrame(out, frame);
    yield out.drain();
    if (view.graph !== undefined) await sidecars?.graph(view.graph.path);
  } finally {
    view.close();
  }
}

/**
 * Writes the snapshot one record (a document, a posting, a word, a piece of the graph) at a time, stopping before each:
 * a frame ends only there, so that {@link readRecords} never finds a record cut between two frames.
 */
function* writeRecords(view: SnapshotView, out: ByteWriter, sidecars?: SnapshotSidecars): Generator<void> {
  out.string(view.language);
  out.f64(view.revision);
  out.u32(view.slots);
  out.u32(view.dims);
  out.u8(view.halfRows ? 1 : 0);
  // The rows that documents hold, where the graph's codes are written beside the snapshot.
  const held = view.graph !== undefined && view.halfRows && sidecars !== undefined
    ? new Uint8Array(view.rows)
    : undefined;
  for (let slot = 0; slot < view.slots; slot++) {
    yield;
    const doc = view.doc(slot);
    if (doc === undefined) {
      out.u8(0);
      continue;
    }
    out.u8(1);
    out.string(doc.id);
    out.string(doc.content.text);
    out.string(doc.content.metadata === undefined ? "" : JSON.stringify(doc.content.metadata));
    out.u32(doc.length);
    out.words(doc.content.spans ?? new Uint32Array(0));
    out.words(Uint32Array.from(doc.passages));
    if (held !== undefined) { for (const row of doc.passages) held[row] = 1; }
  }
  out.u32(view.rows);
  const rowBytes = view.halfRows ? halfStride(view.dims) : view.dims * 4;
  out.u32(rowBytes);
  yield* writeRows(view, out, { rowBytes, perRecord: ROWS_PER_RECORD, held, sidecars });
  // Terms are never empty, so an empty one ends the postings.
  for (const term of view.terms) {
    yield;
    const { slots, counts } = view.posting(term);
    out.string(term);
    out.words(Uint32Array.from(slots));
    out.words(Uint32Array.from(counts));
  }
  out.string("");
  for (const word of view.variantWords) {
    yield;
    if (view.keepsVariant(word)) out.string(word);
  }
  out.string("");
  out.u32(view.graph?.bytes ?? 0);
  if (view.graph !== undefined) yield* appendFile(view.graph, out);
  // Last and optional, so that a snapshot written before it existed still reads: a load starts with the tuned plan.
  if (view.graph !== undefined && view.plan !== undefined) out.string(JSON.stringify(view.plan));
}

/** Appends a file of the size `file` names, a piece per step. */
function* appendFile(file: GraphFile, out: ByteWriter): Generator<void> {
  using handle = Deno.openSync(file.path);
  const piece = new Uint8Array(READ_PIECE_BYTES);
  for (let at = 0; at < file.bytes;) {
    yield;
    const read = handle.readSync(piece.subarray(0, Math.min(READ_PIECE_BYTES, file.bytes - at)));
    if (read === null) throw new Error(`The graph file ended ${file.bytes - at} bytes early`);
    out.append(piece.subarray(0, read));
    at += read;
  }
}

/** How much of the graph's file one step reads. */
const READ_PIECE_BYTES = 1 << 18;

/** Options of {@link decodeSearchSnapshot}. */
export interface SnapshotDecodeOptions {
  graphs?: AnnGraphs | undefined;
  /** The index's language: a snapshot analyzed in another one is refused. */
  language?: string | undefined;
  /** Where the graph is read from as a file: a temporary one by default. */
  graphFiles?: GraphFiles | undefined;
  /** The graph's codes as an earlier load of this snapshot saved them, restored instead of written anew if they fit. */
  codes?: SavedCodes | undefined;
  /**
   * Where float16 rows are mapped from a file kept beside the snapshot, instead of copied out of it; without one, the
   * rows are copied, and written to a new file as they go by.
   */
  rowsFiles?: { files: RowsFiles; mapper: FileMapper } | undefined;
}

/**
 * Decodes what {@link encodeSearchSnapshot} wrote, frame by frame as its chunks arrive. Without `graphs` a stored
 * graph is skipped (the index scans exactly); with them, a large index stored without a graph gets one built from its
 * vectors. Throws on a snapshot of another format or language, and on one cut short or followed by more bytes.
 */
export async function decodeSearchSnapshot(
  chunks: AsyncIterable<Uint8Array> | Uint8Array,
  options: SnapshotDecodeOptions = {},
): Promise<SearchIndex> {
  const frames = new FrameReader(chunks instanceof Uint8Array ? oneChunk(chunks) : chunks);
  const format = new TextDecoder().decode(await frames.next() ?? new Uint8Array(0));
  const version = [FORMAT_FLOAT32_ONLY, FORMAT_VECTORS_BY_DOC, FORMAT].indexOf(format) + 5;
  if (version < 5) throw new Error(`Unknown search snapshot format "${format}"`);
  let input = new ByteReader(await nextFrame(frames));
  const records = readRecords(input, { ...options, version });
  try {
    for (let step = records.next();; step = records.next(input)) {
      if (step.done) {
        if (await frames.next() !== null) throw new Error("The snapshot goes on after its last record");
        return new SearchIndex({ ...step.value, codes: options.codes, graphs: options.graphs });
      }
      while (input.done) input = new ByteReader(await nextFrame(frames));
    }
  } finally {
    // A read that failed between records (the store, a snapshot replaced meanwhile) ends the records too, so that the
    // graph's file they were writing is closed and removed.
    records.return(undefined as never);
  }
}

async function* oneChunk(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

async function nextFrame(frames: FrameReader): Promise<Uint8Array> {
  const frame = await frames.next();
  if (frame === null) throw new RangeError("The snapshot ends before its last record");
  return frame;
}

/**
 * Reads the vector rows of format 7, many at a time, into `vectors`, which has room for them; returns the reader to go
 * on in.
 */
function* readRows(
  first: ByteReader,
  vectors: VectorStore,
  halves: boolean,
  rowsFiles: SnapshotDecodeOptions["rowsFiles"],
): Generator<void, ByteReader, ByteReader> {
  let input = first;
  const rows = input.u32();
  const rowBytes = input.u32();
  vectors.reserve(rows, vectors.dims);
  // Float16 rows as the store keeps them are mapped from a kept file, or written to one as they are copied.
  const mappable = rowsFiles !== undefined && halves && vectors.halfRows && rowBytes === vectors.rowBytes;
  const kept = mappable ? rowsFiles.files.kept(rows, rowBytes) : undefined;
  const mapped = kept !== undefined && vectors.mapRowsOf(rowsFiles!.mapper, kept);
  const draft = mappable && !mapped ? rowsFiles.files.create(rows, rowBytes) : undefined;
  let finished = false;
  try {
    for (let from = 0; from < rows; from += ROWS_PER_RECORD) {
      if (input.done) input = yield;
      const count = Math.min(ROWS_PER_RECORD, rows - from);
      const bytes = input.bytes(count * rowBytes);
      if (!mapped) vectors.setRowsOf(from, bytes, halves);
      draft?.write(bytes);
    }
    draft?.finish(vectors.lengthsOf(rows));
    finished = true;
  } finally {
    if (!finished) draft?.finish();
  }
  return input;
}

/**
 * Reads the records that {@link writeRecords} wrote, stopping where a frame is read to its end (between two records) to
 * be handed the reader of the next: a stop per record cost a 100,000-document load about 10 ms. A frame's bytes are
 * reused once it is read, so whatever outlives a record is copied out of it.
 */
function* readRecords(
  first: ByteReader,
  options: SnapshotDecodeOptions & { version: number },
): Generator<void, SearchIndexParts, ByteReader> {
  let input = first;
  const language = input.string();
  if (options.language !== undefined && language !== options.language) {
    throw new Error(`The snapshot is of language "${language}", the index of "${options.language}"`);
  }
  const revision = input.f64();
  const slots = input.u32();
  const dims = input.u32();
  const halfRows = options.version >= 6 && input.u8() === 1;
  const ids: (string | undefined)[] = Array.from({ length: slots }, () => undefined);
  const stored = new StoredContents(slots);
  const passages: (number[] | undefined)[] = Array.from({ length: slots }, () => undefined);
  const lengths = new Uint32Array(slots);
  const vectors = new VectorStore();
  vectors.reserve(slots, dims);
  let docs = 0;
  for (let slot = 0; slot < slots; slot++) {
    if (input.done) input = yield;
    if (input.u8() === 0) continue;
    ids[slot] = input.string();
    // Texts and metadata stay bytes until read (see StoredContents).
    const text = input.run();
    const metadata = input.run();
    lengths[slot] = input.u32();
    stored.add(slot, text, metadata, input.uintsCopy());
    const rows = input.uintList();
    if (options.version < 7) {
      for (const row of rows) {
        if (halfRows) vectors.setHalves(row, input.bytes(2 * dims));
        else vectors.set(row, input.floats());
      }
    }
    passages[slot] = rows;
    docs++;
  }
  stored.trim();
  if (options.version >= 7) input = yield* readRows(input, vectors, halfRows, options.rowsFiles);
  if (input.done) input = yield;
  const restoring = TextIndex.restoring(analyzerFor(language), lengths, docs);
  for (let term = input.string(); term !== ""; term = (input.done ? input = yield : input).string()) {
    restoring.posting(term, input.uints(), input.uints());
  }
  const variants: string[] = [];
  for (
    let word = (input.done ? input = yield : input).string();
    word !== "";
    word = (input.done ? input = yield : input).string()
  ) variants.push(word);
  const text = restoring.finish(variants);
  const graphBytes = input.u32();
  const { graphs } = options;
  const files = options.graphFiles ?? TEMPORARY_GRAPH_FILES;
  // A graph kept as a file is mapped from there; otherwise its bytes go to a file as they come, and are read from it.
  const kept = graphBytes === 0 || graphs === undefined ? undefined : files.kept(graphBytes);
  let ann = kept === undefined ? undefined : viewOrNone(graphs!, kept, dims);
  const draft = ann !== undefined || graphBytes === 0 || graphs === undefined ? undefined : files.create();
  try {
    {
      using file = draft === undefined ? undefined : Deno.openSync(draft.path, { write: true, create: true });
      for (let at = 0; at < graphBytes;) {
        if (input.done) input = yield;
        const piece = input.bytes(Math.min(graphBytes - at, input.remaining));
        if (file !== undefined) writeWhole(file, piece);
        at += piece.byteLength;
      }
    }
    if (draft !== undefined) ann = graphs!.load(draft.path, dims);
  } finally {
    draft?.finish(ann !== undefined);
  }
  const plan = input.done ? undefined : JSON.parse(input.string()) as VectorPlan;
  return { revision, ids, stored, passages, vectors, text, ann, plan };
}

/** The graph in the kept file at `path`, or none when it does not map (a damaged file: it is written again). */
function viewOrNone(graphs: AnnGraphs, path: string, dims: number): AnnIndex | undefined {
  try {
    return graphs.view(path, dims);
  } catch {
    return undefined;
  }
}
