/**
 * Target 8's peer: LanceDB (`@lancedb/lancedb`, the embedded vector database from npm), used in-process as its docs
 * show, on the vectors and batches that `run_peer.ts` wrote. Prints its timings as one JSON line. It has its own
 * `deno.json`, so that LanceDB never enters the service's dependencies.
 */
import * as lancedb from "@lancedb/lancedb";

const dir = Deno.args[0]!;
const fixture = JSON.parse(await Deno.readTextFile(`${dir}/peer.json`));
const raw = await Deno.readFile(`${dir}/peer.f32`);
const floats = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
const dims: number = fixture.dims;
const row = (offset: number) => Array.from(floats.subarray(offset * dims, (offset + 1) * dims));

const db = await lancedb.connect(`${dir}/lancedb`);
let start = performance.now();
const rows = (fixture.ids as string[]).map((id, i) => ({ id, vector: row(i) }));
const table = await db.createTable("docs", rows);
const load = performance.now() - start;
start = performance.now();
await table.createIndex("vector");
const indexing = performance.now() - start;

let next = fixture.ids.length;
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
const search: number[] = [];
for (let q = 0; q < fixture.queries; q++) {
  const query = row(next++);
  start = performance.now();
  await table.search(query).limit(10).toArray();
  search.push(performance.now() - start);
}
console.log(JSON.stringify({ load, indexing, upsert, delete: remove, search }));
