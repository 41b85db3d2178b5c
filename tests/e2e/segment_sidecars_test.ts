/**
 * End-to-end: the files kept beside this host's copy of a snapshot (`SEGMENT_DIR`), by the process that wrote the
 * snapshot or by the first load that derived them: the HNSW graph as the file USearch reads, the graph's int8 codes, and
 * the float16 rows laid out to be mapped. The next load of that version reads (or maps) them instead of deriving them
 * again and answers the same; damaged ones are derived again and replaced.
 */
import assert from "node:assert/strict";
import { bigAnswers, bigCopy, bigIndex, bigVectors, startWithBigIndex } from "../_big_index.ts";
import { mappedFiles, type TestServer } from "../_helpers.ts";

const vector = bigVectors(53);
const QUERIES = Array.from({ length: 4 }, vector);
const answers = (server: TestServer) => bigAnswers(server, QUERIES);

/** The paths of the index's graph, codes and rows beside the copy of its current snapshot. */
async function derivedPaths(server: TestServer): Promise<{ graph: string; codes: string; rows: string }> {
  const { base } = await bigCopy(server);
  return { graph: `${base}.graph`, codes: `${base}.codes`, rows: `${base}.rows` };
}

/** Waits until a file is there: the codes are written after the load that derived them has answered. */
async function fileAt(path: string): Promise<Deno.FileInfo> {
  for (let waited = 0;; waited += 50) {
    try {
      return await Deno.stat(path);
    } catch (error) {
      if (waited > 10_000) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

Deno.test("a copy keeps its graph, codes and rows beside it; the next load reads them, and damaged ones are replaced", async () => {
  let server = await startWithBigIndex(vector);
  try {
    await server.service.context.background.idle();
    server = await server.restart();
    const before = await answers(server);
    const paths = await derivedPaths(server);
    const graph = { info: await fileAt(paths.graph), bytes: await Deno.readFile(paths.graph) };
    const codes = { info: await fileAt(paths.codes), bytes: await Deno.readFile(paths.codes) };
    assert.ok(graph.bytes.byteLength > 0 && codes.bytes.byteLength > 0);
    const rows = await fileAt(paths.rows);

    server = await server.restart();
    assert.deepEqual(await answers(server), before);
    const loaded = await bigIndex(server);
    await server.service.context.background.idle();
    const state = `plan ${JSON.stringify(loaded.vectorPlan)}, ${loaded.pendingGraphInserts} waiting`;
    assert.ok(loaded.graphMapped, `the graph is mapped, not loaded (${state})`);
    assert.equal((await Deno.stat(paths.graph)).ino, graph.info.ino, "the graph is read, not written again");
    assert.equal((await Deno.stat(paths.codes)).ino, codes.info.ino, "the codes are read, not written again");
    assert.equal((await Deno.stat(paths.rows)).ino, rows.ino, "the rows are read, not written again");

    // Damaged: a graph of the right size that is not one, codes of random bytes, and codes cut short.
    const damage = [
      { path: paths.graph, bytes: new Uint8Array(graph.bytes.byteLength), whole: graph.bytes },
      { path: paths.codes, bytes: codes.bytes.map(() => Math.floor(Math.random() * 256)), whole: codes.bytes },
      { path: paths.codes, bytes: codes.bytes.subarray(0, codes.bytes.byteLength - 1), whole: codes.bytes },
    ];
    for (const { path, bytes, whole } of damage) {
      await Deno.writeFile(path, bytes);
      server = await server.restart();
      assert.deepEqual(await answers(server), before);
      for (let waited = 0; waited < 10_000 && !equalBytes(await Deno.readFile(path), whole); waited += 50) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // Compared byte by byte: a diff of two large arrays in an assertion's message takes gigabytes.
      assert.ok(equalBytes(await Deno.readFile(path), whole), "derived again and kept whole");
    }

    // The kept codes and rows are mapped (the graph is too, until the first insert, which may be a restored pending
    // vector's: see the unit tests); writes change them in memory only.
    const mapped = await mappedFiles();
    for (const path of [paths.codes, paths.rows]) assert.ok(mapped.includes(path), `${path} is mapped`);
    const added = vector();
    await server.ok({ action: "addDocs", indexName: "big", docs: [{ id: "new", text: "new", vector: added }] });
    const search = { action: "search", indexName: "big", mode: "vector", vector: added, limit: 20 };
    assert.equal((await server.ok<{ hits: { id: string }[] }>(search)).hits[0]?.id, "new");
    // A load that replays a few added vectors from the log keeps the graph mapped: they wait, scanned, as between writes.
    server = await server.restart();
    await bigIndex(server);
    await server.service.context.background.idle();
    assert.ok((await bigIndex(server)).graphMapped, "still mapped with a vector waiting");
    assert.equal((await server.ok<{ hits: { id: string }[] }>(search)).hits[0]?.id, "new");
    await server.ok({ action: "deleteDocs", indexName: "big", docIds: ["d17"] });
    const hybrid = {
      action: "search",
      indexName: "big",
      mode: "hybrid",
      query: "doc 17",
      vector: QUERIES[0],
      limit: 20,
    };
    assert.ok(!(await server.ok<{ hits: { id: string }[] }>(hybrid)).hits.some((hit) => hit.id === "d17"));
    assert.ok(!(await bigIndex(server)).graphMapped, "a removal loads the graph into memory");
    assert.ok(equalBytes(await Deno.readFile(paths.graph), graph.bytes), "the graph file is never written");
    assert.ok(equalBytes(await Deno.readFile(paths.codes), codes.bytes), "the codes file is never written");
  } finally {
    await server.close();
  }
});

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && a.every((byte, i) => byte === b[i]);
}

Deno.test("what a load derives is kept even when the process closes right after its first answer", async () => {
  let server = await startWithBigIndex(vector);
  try {
    await server.service.context.background.idle();
    const paths = await derivedPaths(server);
    await server.close();
    // A copy without the rows and codes beside it, as an older release or another host leaves one.
    for (const path of [paths.rows, paths.codes]) await Deno.remove(path);
    server = await server.restart();
    await server.ok({ action: "search", indexName: "big", mode: "vector", vector: QUERIES[0], limit: 5 });
    await server.close();
    for (const path of [paths.rows, paths.codes]) assert.ok((await Deno.stat(path)).size > 0, `${path} was kept`);
  } finally {
    await server.close();
  }
});
