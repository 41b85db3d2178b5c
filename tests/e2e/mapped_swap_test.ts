/**
 * End-to-end: a process whose writes built a large index's state in memory swaps it, once the index goes quiet, for a
 * load of the snapshot it wrote, whose copy keeps its rows, codes and graph beside it (`SEGMENT_DIR`): that load maps
 * the rows and codes, and answers as the built state did, before and after further writes and a restart.
 */
import assert from "node:assert/strict";
import { bigAnswers, bigCopy, bigIndex, bigVectors, startWithBigIndex } from "../_big_index.ts";
import { mappedFiles, type TestServer } from "../_helpers.ts";

const vector = bigVectors(54);
const QUERIES = Array.from({ length: 4 }, vector);
const answers = (server: TestServer) => bigAnswers(server, QUERIES);

Deno.test("a state that writes built is swapped, once quiet, for a mapped load of the snapshot written here", async () => {
  let server = await startWithBigIndex(vector);
  try {
    const built = await bigIndex(server);
    const before = await answers(server);
    // The snapshots' writes, then the swap, which waits for the index to go quiet.
    await server.service.context.background.idle();
    const swapped = await bigIndex(server);
    assert.notEqual(swapped, built, "the state was swapped");
    const { base } = await bigCopy(server);
    const maps = await mappedFiles();
    assert.ok(maps.includes(`${base}.rows`), "the swapped state maps the rows the snapshot kept");
    assert.ok(maps.includes(`${base}.codes`), "and the codes");
    assert.equal(swapped.derivedCodes(), undefined, "no codes were derived");
    assert.ok((await Deno.stat(`${base}.graph`)).size > 0, "the snapshot kept its graph beside its copy");
    assert.deepEqual(await answers(server), before);

    // Writes go on in the swapped state, in memory only: the mapped file is never written.
    const rowsFile = await Deno.readFile(`${base}.rows`);
    const added = vector();
    await server.ok({ action: "addDocs", indexName: "big", docs: [{ id: "new", text: "new", vector: added }] });
    await server.ok({ action: "deleteDocs", indexName: "big", docIds: ["d17"] });
    const search = { action: "search", indexName: "big", mode: "vector", vector: added, limit: 20 };
    assert.equal((await server.ok<{ hits: { id: string }[] }>(search)).hits[0]?.id, "new");
    const after = await answers(server);
    assert.ok(!JSON.stringify(after).includes('"d17"'), "the deleted document is gone");
    const unchanged = await Deno.readFile(`${base}.rows`);
    assert.ok(unchanged.byteLength === rowsFile.byteLength && unchanged.every((byte, i) => byte === rowsFile[i]));

    server = await server.restart();
    assert.deepEqual(await answers(server), after);
  } finally {
    await server.close();
  }
});
