/**
 * The benchmarks' peer: LanceDB (`@lancedb/lancedb`, the embedded vector database from npm), used in-process as its
 * docs show, on the vectors and batches that `run_peer.ts` wrote. First with its default settings (no index: each
 * search scans every row), then with its ANN index built (`createIndex`, IVF_PQ by default), searched with its default
 * probes and with each setting of `searchSettings`. Prints its timings and the ids it found as one JSON line. It has its
 * own `deno.json`, so that LanceDB never enters the service's dependencies.
 */
import * as lancedb from "@lancedb/lancedb";

const dir = Deno.args[0]!;
const fixture = JSON.parse(await Deno.readTextFile(`${dir}/peer.json`));
const raw = await Deno.readFile(`${dir}/peer.f32`);
const floats = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
const dims: number = fixture.dims;
const row = (offset: number) => Array.from(floats.subarray(offset * dims, (offset + 1) * dims));
const batchOffset = fixture.ids.length;
const queryOffset = batchOffset + (fixture.batches as string[][]).flat().length;

const db = await lancedb.connect(`${dir}/lancedb`);
let start = performance.now();
// In pieces: one array of a million rows of 384 numbers would not fit the heap.
const ids = fixture.ids as string[];
const table = await db.createTable("docs", ids.slice(0, 10_000).map((id, i) => ({ id, vector: row(i) })));
for (let from = 10_000; from < ids.length; from += 10_000) {
  await table.add(ids.slice(from, from + 10_000).map((id, i) => ({ id, vector: row(from + i) })));
}
const load = performance.now() - start;

/** Upserts each 10-row batch, then deletes it again, timing each. */
async function writes() {
  let next = batchOffset;
  const upsert: number[] = [];
  const remove: number[] = [];
  for (const batch of fixture.batches as string[][]) {
    const docs = batch.map((id) => ({ id, vector: row(next++) }));
    start = performance.now();
    await table.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(docs);
    upsert.push(performance.now() - start);
    start = performance.now();
    await table.delete(`id IN (${batch.map((id) => `'${id}'`).join(", ")})`);
    remove.push(performance.now() - start);
  }
  return { upsert, delete: remove };
}

/** Runs every query, timing each, with `setting`'s probes and refinement if given. */
async function searches(setting?: { nprobes: number; refineFactor: number }) {
  const search: number[] = [];
  const found: string[][] = [];
  for (let q = 0; q < fixture.queries; q++) {
    const query = row(queryOffset + q);
    start = performance.now();
    let request = table.vectorSearch(query).limit(10);
    if (setting !== undefined) request = request.nprobes(setting.nprobes).refineFactor(setting.refineFactor);
    const rows = await request.toArray();
    search.push(performance.now() - start);
    found.push(rows.map((row: { id: string }) => row.id));
  }
  return { search, found };
}

const flat = { ...await writes(), ...await searches() };
start = performance.now();
await table.createIndex("vector");
const indexing = performance.now() - start;
const indexed = { ...await writes(), ...await searches() };
const settings = [];
for (const setting of (fixture.searchSettings ?? []) as { nprobes: number; refineFactor: number }[]) {
  settings.push({ ...setting, ...await searches(setting) });
}
console.log(JSON.stringify({ load, indexing, flat, indexed, settings }));
