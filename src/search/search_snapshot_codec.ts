/**
 * The snapshot format of an index's search state: the language of its full-text side, its documents by slot (id,
 * text, metadata as JSON, term count, and their passages' slots, spans and vectors as float32, each stored once), the
 * full-text postings and the words typos and prefixes are matched against, and the HNSW graph of passages (empty when
 * the index has none), so that a load rebuilds nothing it can read.
 */
import { ByteReader, ByteWriter } from "../util/byte_codec.ts";
import type { AnnGraphs } from "./ann_graphs.ts";
import { type DocContent, SearchIndex } from "./search_index.ts";
import { analyzerFor } from "../fulltext/analyzer.ts";
import { type Posting, TextIndex } from "./text_index.ts";
import { VectorStore } from "./vector_store.ts";

const FORMAT = "quire-search-4";

/** Encodes an index's search state. */
export function encodeSearchSnapshot(index: SearchIndex): Uint8Array {
  const { revision, ids, contents, passages, vectors, text, ann } = index.parts();
  const out = new ByteWriter();
  out.string(FORMAT);
  out.string(text.analyzer.language);
  out.f64(revision);
  out.u32(ids.length);
  out.u32(vectors.dims);
  // A plain loop: `forEach` skips the holes of a sparse array, and an empty slot must still be written.
  for (let slot = 0; slot < ids.length; slot++) {
    const id = ids[slot];
    if (id === undefined) {
      out.u8(0);
      continue;
    }
    const content = contents[slot]!;
    out.u8(1);
    out.string(id);
    out.string(content.text);
    out.string(content.metadata === undefined ? "" : JSON.stringify(content.metadata));
    out.u32(text.length(slot));
    out.words(content.spans ?? new Uint32Array(0));
    const rows = passages[slot]!;
    out.words(Uint32Array.from(rows));
    for (const row of rows) out.words(vectors.row(row));
  }
  // Terms are never empty, so an empty one ends the postings.
  for (const { term, slots, counts } of text.postings()) {
    out.string(term);
    out.words(Uint32Array.from(slots));
    out.words(Uint32Array.from(counts));
  }
  out.string("");
  for (const word of text.variants()) out.string(word);
  out.string("");
  out.run(ann?.save() ?? new Uint8Array(0));
  return out.bytes();
}

/** Options of {@link decodeSearchSnapshot}. */
export interface SnapshotDecodeOptions {
  graphs?: AnnGraphs | undefined;
  /** The index's language: a snapshot analyzed in another one is refused. */
  language?: string | undefined;
}

/**
 * Decodes what {@link encodeSearchSnapshot} wrote. Without `graphs` a stored graph is skipped (the index scans
 * exactly); with them, a large index stored without a graph gets one built from its vectors.
 */
export function decodeSearchSnapshot(bytes: Uint8Array, options: SnapshotDecodeOptions = {}): SearchIndex {
  const input = new ByteReader(bytes);
  const format = input.string();
  if (format !== FORMAT) throw new Error(`Unknown search snapshot format "${format}"`);
  const language = input.string();
  if (options.language !== undefined && language !== options.language) {
    throw new Error(`The snapshot is of language "${language}", the index of "${options.language}"`);
  }
  const revision = input.f64();
  const slots = input.u32();
  const dims = input.u32();
  const ids: (string | undefined)[] = Array.from({ length: slots }, () => undefined);
  const contents: (DocContent | undefined)[] = Array.from({ length: slots }, () => undefined);
  const passages: (number[] | undefined)[] = Array.from({ length: slots }, () => undefined);
  const lengths = new Uint32Array(slots);
  const vectors = new VectorStore();
  vectors.reserve(slots, dims);
  let docs = 0;
  for (let slot = 0; slot < slots; slot++) {
    if (input.u8() === 0) continue;
    ids[slot] = input.string();
    const text = input.string();
    const metadata = input.string();
    const content: DocContent = metadata === "" ? { text } : { text, metadata: JSON.parse(metadata) };
    lengths[slot] = input.u32();
    const spans = input.uints();
    if (spans.length > 0) content.spans = spans.slice();
    contents[slot] = content;
    const rows = Array.from(input.uints());
    for (const row of rows) vectors.set(row, input.floats());
    passages[slot] = rows;
    docs++;
  }
  const postings: Posting[] = [];
  for (let term = input.string(); term !== ""; term = input.string()) {
    postings.push({ term, slots: input.uints(), counts: input.uints() });
  }
  const variants: string[] = [];
  for (let word = input.string(); word !== ""; word = input.string()) variants.push(word);
  const text = TextIndex.fromPostings(analyzerFor(language), postings, variants, lengths, docs);
  const graph = input.run();
  const { graphs } = options;
  const ann = graph.byteLength === 0 || graphs === undefined ? undefined : graphs.load(graph, dims);
  return new SearchIndex({ revision, ids, contents, passages, vectors, text, ann, graphs });
}
