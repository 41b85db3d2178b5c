/**
 * A load passes a snapshot's HNSW graph to USearch through a file (see `src/segments/graph_files.ts`): the file is read
 * from where it is kept (mapped, until a change loads it), or written as the graph's bytes arrive, and whatever the load
 * wrote is finished either way: kept once loaded, removed when the read fails part way.
 */
import assert from "node:assert/strict";
import { loadAnnGraphs } from "../../src/search/ann_graphs.ts";
import { SearchIndex } from "../../src/search/search_index.ts";
import { VectorStore } from "../../src/search/vector_store.ts";
import { decodeSearchSnapshot } from "../../src/search/search_snapshot_codec.ts";
import { EXACT_SEARCH_MAX_VECTORS } from "../../src/search/vector_candidates.ts";
import type { GraphFiles } from "../../src/segments/graph_files.ts";
import { snapshotBytes } from "../_helpers.ts";
import { normals } from "../_vectors.ts";

const DIMS = 8;

/** A snapshot of an index large enough to have a graph. */
async function snapshotWithGraph(): Promise<Uint8Array> {
  const normal = normals(7);
  const index = new SearchIndex({ revision: 0, graphs: await loadAnnGraphs() });
  index.apply(Array.from({ length: EXACT_SEARCH_MAX_VECTORS + 500 }, (_, i) => {
    const text = `doc ${i}`;
    const vector = Float32Array.from({ length: DIMS }, normal);
    return { id: `d${i}`, doc: { text, passages: [{ start: 0, end: text.length, vector }] } };
  }));
  index.flushGraph();
  return await snapshotBytes(index);
}

/** Graph files in a directory of the test's, recording how each written one was finished. */
function recordingFiles(dir: string, kept?: string): GraphFiles & { finished: boolean[] } {
  const finished: boolean[] = [];
  return {
    finished,
    kept: () => kept,
    create: () => {
      const path = `${dir}/graph-${finished.length}`;
      return {
        path,
        finish: (loaded) => {
          finished.push(loaded);
          if (!loaded) Deno.removeSync(path);
        },
      };
    },
  };
}

Deno.test("a graph written from a snapshot is finished as loaded, and a kept one is read without writing", async () => {
  const bytes = await snapshotWithGraph();
  const graphs = await loadAnnGraphs();
  const dir = await Deno.makeTempDir();
  try {
    const files = recordingFiles(dir);
    const index = await decodeSearchSnapshot(bytes, { graphs, graphFiles: files });
    assert.deepEqual(files.finished, [true]);
    assert.equal(index.graphVectors, EXACT_SEARCH_MAX_VECTORS + 500);
    const fromKept = recordingFiles(dir, `${dir}/graph-0`);
    const again = await decodeSearchSnapshot(bytes, { graphs, graphFiles: fromKept });
    assert.deepEqual(fromKept.finished, [], "nothing written");
    assert.equal(again.graphVectors, index.graphVectors);
    const query = Float32Array.from({ length: DIMS }, normals(8));
    const search = { mode: "vector", text: "", vector: query, limit: 10, offset: 0 } as const;
    assert.deepEqual(again.search(search), index.search(search));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** The snapshot's bytes, then a failure near the end: within the graph, the snapshot's last large part. */
async function* failingNearTheEnd(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes.subarray(0, bytes.byteLength - 20_000);
  throw new Error("the store went away");
}

Deno.test("a read that fails within the graph's bytes removes the file the load was writing", async () => {
  const bytes = await snapshotWithGraph();
  const dir = await Deno.makeTempDir();
  try {
    const files = recordingFiles(dir);
    const graphs = await loadAnnGraphs();
    await assert.rejects(
      () => decodeSearchSnapshot(failingNearTheEnd(bytes), { graphs, graphFiles: files }),
      /the store went away/,
    );
    assert.deepEqual(files.finished, [false]);
    assert.deepEqual([...Deno.readDirSync(dir)], [], "no file left");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a graph viewed from a kept file takes changes in memory, also once the file is gone or replaced", async () => {
  const graphs = await loadAnnGraphs();
  const normal = normals(9);
  const vectors = new VectorStore();
  for (let slot = 0; slot < 300; slot++) vectors.set(slot, Float32Array.from({ length: DIMS }, normal));
  const built = graphs.create(DIMS);
  built.add(Array.from({ length: 200 }, (_, slot) => slot), vectors);
  const saved = built.saveFile();
  const aside = `${saved.path}-aside`;
  try {
    const bytes = await Deno.readFile(saved.path);
    for (const change of ["none", "gone", "replaced by half of it"]) {
      const viewed = graphs.view(saved.path, DIMS);
      assert.equal(viewed.size, 200);
      if (change !== "none") await Deno.rename(saved.path, aside);
      if (change === "replaced by half of it") {
        await Deno.writeFile(saved.path, bytes.subarray(0, bytes.byteLength / 2));
      }
      viewed.add(Array.from({ length: 100 }, (_, i) => 200 + i), vectors);
      viewed.remove(5);
      assert.equal(viewed.size, 299, change);
      assert.deepEqual(viewed.search(vectors.row(250), 1, 64), [250]);
      assert.deepEqual(viewed.search(vectors.row(150), 1, 64), [150]);
      if (change !== "none") await Deno.rename(aside, saved.path);
      assert.deepEqual(await Deno.readFile(saved.path), bytes, "the file is never written");
    }
  } finally {
    await Deno.remove(saved.path);
  }
});
