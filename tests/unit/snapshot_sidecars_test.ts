/**
 * A snapshot encoded with its copy on this host writes beside it the files a load would otherwise derive (see
 * `src/search/snapshot_rows.ts` and `src/segments/segment_copy.ts`): the float16 rows with their lengths, the graph's
 * int8 codes and sign bits, and the graph. Each is byte for byte what a load derives from the snapshot, even when
 * writes change the index while it is encoded, and a load of the copy maps them and answers as the index did.
 */
import assert from "node:assert/strict";
import { loadAnnGraphs } from "../../src/search/ann_graphs.ts";
import { SearchIndex } from "../../src/search/search_index.ts";
import { decodeSearchSnapshot, encodeSearchSnapshot } from "../../src/search/search_snapshot_codec.ts";
import type { SearchQuery } from "../../src/search/search_query.ts";
import { EXACT_SEARCH_MAX_VECTORS } from "../../src/search/vector_candidates.ts";
import { codesFileBytes } from "../../src/segments/codes_files.ts";
import { copying, SegmentFiles } from "../../src/segments/segment_files.ts";
import { FileMapper } from "../../src/util/file_mapping.ts";
import { concatBytes } from "../../src/util/concat_bytes.ts";
import { mappedFiles } from "../_helpers.ts";
import { normals } from "../_vectors.ts";

const DIMS = 12;
const normal = normals(19);
const vector = () => Float32Array.from({ length: DIMS }, normal);

function doc(id: string, text: string) {
  return { id, doc: { text, passages: [{ start: 0, end: text.length, vector: vector() }] } };
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && a.every((byte, i) => byte === b[i]);
}

Deno.test("the rows, codes and graph kept with a snapshot are what a load derives, and a load maps them", async () => {
  const graphs = await loadAnnGraphs();
  const index = new SearchIndex({ revision: 0, graphs });
  // Texts long enough that the first piece is handed on while documents are encoded, before the rows.
  const padding = "x".repeat(200);
  index.apply(Array.from({ length: EXACT_SEARCH_MAX_VECTORS + 700 }, (_, i) => doc(`d${i}`, `doc ${i} ${padding}`)));
  index.flushGraph();
  const searches: SearchQuery[] = Array.from({ length: 4 }, () => ({
    mode: "vector",
    text: "",
    vector: vector(),
    limit: 10,
    offset: 0,
  }));
  searches.push({ mode: "hybrid", text: "doc 17", vector: vector(), limit: 10, offset: 0 });
  const dir = await Deno.makeTempDir();
  try {
    const segments = (await SegmentFiles.open(dir))!;
    const copy = (await segments.begin("index"))!;
    const pieces: Uint8Array[] = [];
    let changed = false;
    for await (const piece of copying(encodeSearchSnapshot(index, undefined, copy), copy)) {
      pieces.push(piece.slice());
      if (changed) continue;
      // Writes while the snapshot is encoded change the index, not the snapshot nor the files beside it: a changed
      // vector, a deleted document, and a new one.
      changed = true;
      index.apply([doc("d5", "doc 5 again"), { id: "d9", doc: null }, doc("late", "late")]);
    }
    const bytes = concatBytes(pieces);
    assert.ok(pieces.length > 2, "the writes landed part way");
    assert.ok(await copy.keep("v1", bytes.byteLength));
    const at = `${dir}/index/v1`;

    // What a load derives, with no files to read.
    const derived = await decodeSearchSnapshot(bytes, { graphs });
    const codes = derived.derivedCodes();
    assert.ok(codes !== undefined);
    assert.ok(equalBytes(Deno.readFileSync(`${at}.codes`), codesFileBytes(codes)), "the codes are a load's");
    const other = (await SegmentFiles.open(`${dir}/other`))!;
    const rowsFiles = other.rowsFiles("index", "v1");
    await decodeSearchSnapshot(bytes, { graphs, rowsFiles: { files: rowsFiles, mapper: FileMapper.get()! } });
    rowsFiles.settle(true);
    const written = `${dir}/other/index/v1.rows`;
    for (let waited = 0; waited < 10_000 && !(await Deno.stat(written).catch(() => null)); waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(equalBytes(Deno.readFileSync(`${at}.rows`), Deno.readFileSync(written)), "the rows are a load's");

    // A load of the copy maps the rows and codes, takes the graph from its file, and answers as a derived load does.
    const mapper = FileMapper.get()!;
    const loaded = await decodeSearchSnapshot(bytes, {
      graphs,
      codes: segments.savedCodes("index", "v1", mapper),
      graphFiles: segments.graphFiles("index", "v1"),
      rowsFiles: { files: segments.rowsFiles("index", "v1"), mapper },
    });
    assert.equal(loaded.derivedCodes(), undefined, "the codes were taken from the file");
    assert.ok(loaded.graphMapped, "the graph is viewed from its file");
    const maps = await mappedFiles();
    for (const suffix of [".rows", ".codes"]) assert.ok(maps.includes(`${at}${suffix}`), `${suffix} is mapped`);
    for (const search of searches) assert.deepEqual(loaded.search(search), derived.search(search));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
