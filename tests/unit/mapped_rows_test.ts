/**
 * Float16 rows mapped from a file instead of copied (see `src/util/file_mapping.ts` and `src/segments/rows_files.ts`):
 * a mapped file reads as its bytes and takes private writes; a load writes a snapshot's rows to a file as they go by,
 * and the next load of that version maps them and answers the same; a file that does not fit is copied past and
 * written again.
 */
import assert from "node:assert/strict";
import { SearchIndex } from "../../src/search/search_index.ts";
import { decodeSearchSnapshot } from "../../src/search/search_snapshot_codec.ts";
import type { SearchQuery } from "../../src/search/search_query.ts";
import { EXACT_SEARCH_MAX_VECTORS } from "../../src/search/vector_candidates.ts";
import { SegmentFiles } from "../../src/segments/segment_files.ts";
import { FileMapper, MAPPING_ALIGN } from "../../src/util/file_mapping.ts";
import { mappedFiles, snapshotBytes } from "../_helpers.ts";
import { normals } from "../_vectors.ts";

const DIMS = 12;

Deno.test("a file mapped into shared memory reads as the file, keeps writes private, and misfits are refused", async () => {
  const mapper = FileMapper.get();
  assert.ok(mapper !== undefined, "Linux with --allow-ffi maps files");
  const path = Deno.makeTempFileSync();
  try {
    const pattern = Uint8Array.from({ length: 3 * MAPPING_ALIGN }, (_, i) => (i * 13 + 5) % 256);
    Deno.writeFileSync(path, pattern);
    const memory = new WebAssembly.Memory({ initial: 4, maximum: 16, shared: true });
    const bytes = () => new Uint8Array(memory.buffer);
    assert.ok(mapper.mapInto(memory, MAPPING_ALIGN, path, MAPPING_ALIGN, 2 * MAPPING_ALIGN));
    assert.deepEqual(bytes().subarray(MAPPING_ALIGN, 3 * MAPPING_ALIGN), pattern.subarray(MAPPING_ALIGN));
    assert.ok(bytes().subarray(0, MAPPING_ALIGN).every((byte) => byte === 0), "the pages before are untouched");
    bytes()[MAPPING_ALIGN] = 255 - pattern[MAPPING_ALIGN]!;
    assert.equal(Deno.readFileSync(path)[MAPPING_ALIGN], pattern[MAPPING_ALIGN], "the file is never written");
    assert.ok((await mappedFiles()).includes(path));

    assert.equal(mapper.mapInto(memory, 4_096, path, 0, MAPPING_ALIGN), false, "not on a page");
    assert.equal(mapper.mapInto(memory, 3 * MAPPING_ALIGN, path, 0, 2 * MAPPING_ALIGN), false, "past the memory");
    assert.equal(mapper.mapInto(memory, 0, path, 2 * MAPPING_ALIGN, 2 * MAPPING_ALIGN), false, "past the file");
    assert.equal(mapper.mapInto(memory, 0, `${path}-missing`, 0, MAPPING_ALIGN), false, "no file");
    assert.ok(bytes().subarray(0, MAPPING_ALIGN).every((byte) => byte === 0), "a refusal changes nothing");
  } finally {
    Deno.removeSync(path);
  }
});

/** An index with enough vectors to keep them as float16 rows, and a few queries' searches of it. */
function indexAndSearches(): { index: SearchIndex; searches: SearchQuery[] } {
  const normal = normals(11);
  const vector = () => Float32Array.from({ length: DIMS }, normal);
  const index = new SearchIndex({ revision: 0 });
  index.apply(Array.from({ length: EXACT_SEARCH_MAX_VECTORS + 700 }, (_, i) => {
    const text = `doc ${i} ${i % 7 === 0 ? "seventh" : "other"}`;
    return { id: `d${i}`, doc: { text, passages: [{ start: 0, end: text.length, vector: vector() }] } };
  }));
  const searches = Array.from({ length: 3 }, (): SearchQuery => ({
    mode: "vector",
    text: "",
    vector: vector(),
    limit: 10,
    offset: 0,
  }));
  searches.push({ mode: "hybrid", text: "seventh", vector: vector(), limit: 10, offset: 0 });
  return { index, searches };
}

/** Waits until the file at `path` has `bytes` bytes: a kept file is renamed into place in the background. */
async function sizeReached(path: string, bytes?: number): Promise<number> {
  for (let waited = 0;; waited += 20) {
    const size = await Deno.stat(path).then((info) => info.size, () => undefined);
    if (size !== undefined && (bytes === undefined || size === bytes)) return size;
    if (waited > 10_000) throw new Error(`${path} never came`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

Deno.test("a load writes a snapshot's rows to a file, the next maps them and answers the same, a misfit is rewritten", async () => {
  const { index, searches } = indexAndSearches();
  const bytes = await snapshotBytes(index);
  const dir = await Deno.makeTempDir();
  try {
    const segments = (await SegmentFiles.open(dir))!;
    const mapper = FileMapper.get()!;
    const decode = async (versionId: string) => {
      const files = segments.rowsFiles("index", versionId);
      const decoded = await decodeSearchSnapshot(bytes, { rowsFiles: { files, mapper } });
      files.settle(true);
      return decoded;
    };
    const path = `${dir}/index/v1.rows`;
    const copied = await decode("v1");
    const size = await sizeReached(path);
    assert.ok(!(await mappedFiles()).includes(path), "the first load copies");

    const mapped = await decode("v1");
    assert.ok((await mappedFiles()).includes(path), "the next load maps");
    for (const search of searches) {
      assert.deepEqual(mapped.search(search), index.search(search));
      assert.deepEqual(copied.search(search), index.search(search));
    }
    // Writes after the load change the mapped rows in memory only.
    const vector = new Float32Array(DIMS).fill(1);
    mapped.apply([{ id: "d3", doc: { text: "doc 3", passages: [{ start: 0, end: 5, vector }] } }]);
    const same = { mode: "vector", text: "", vector, limit: 1, offset: 0 } as const;
    assert.equal(mapped.search(same).hits[0]?.id, "d3");
    assert.equal(await sizeReached(path), size);

    // A file of another shape is copied past, and replaced by the one this load writes.
    const short = `${dir}/index/v2.rows`;
    Deno.writeFileSync(short, Deno.readFileSync(path).subarray(0, size - 8));
    const fromShort = await decode("v2");
    assert.ok(!(await mappedFiles()).includes(short));
    for (const search of searches) assert.deepEqual(fromShort.search(search), index.search(search));
    assert.equal(await sizeReached(short, size), size);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
