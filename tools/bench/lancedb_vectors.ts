/**
 * `deno task bench:lancedb`: quire against LanceDB on the same client vectors, neither side embedding (issue 16, target
 * 7). Upsert of 10 documents, delete of the same 10, and vector top-10 at one client, with each side's recall@10
 * against an exact scan. quire is a server over HTTP, loaded with `addDocs` and settled; LanceDB runs in-process (see
 * `peer/lancedb_peer.ts`) with its default settings (no index), then with its ANN index built and searched with its
 * default probes and with wider ones. `--docs` sets the corpus size (100,000 by default), `--corpus` the vectors
 * (near-random by default, or clustered), `--queries` the searches per setting (200; fewer at a million, where
 * LanceDB's scans take about a second each).
 */
import { parseArgs } from "node:util";
import { exactSearch, MetricKind } from "usearch";
import { line, ok, rssMiB, timed } from "./_bench_helpers.ts";
import { ms, quantile } from "./_corpus.ts";
import {
  clientVectorEnvironment,
  type Corpus,
  DIMS,
  loadClientVectors,
  settle,
  startClientVectorServer,
  vectorOf,
} from "./_client_vectors.ts";
import { type PeerSearchSetting, runPeer } from "./peer/run_peer.ts";

const args = parseArgs({
  args: Deno.args,
  options: { docs: { type: "string" }, corpus: { type: "string" }, queries: { type: "string" } },
});
const DOCS = Number(args.values.docs ?? 100_000);
const CORPUS = (args.values.corpus ?? "near-random") as Corpus;
const QUERIES = Number(args.values.queries ?? 200);
const WRITE_ROUNDS = 20;
/**
 * LanceDB's searches of its index besides its defaults (20 probes, no refinement), wider and wider, up to one that
 * re-scores 10,000 candidates exactly: on near-random vectors its product quantization ranks them poorly, and 100
 * probes with 20× refinement found a third of the true top 10.
 */
const SEARCH_SETTINGS: PeerSearchSetting[] = [
  { nprobes: 20, refineFactor: 10 },
  { nprobes: 50, refineFactor: 100 },
  { nprobes: 100, refineFactor: 500 },
  { nprobes: 300, refineFactor: 1000 },
];

const ids = Array.from({ length: DOCS }, (_, i) => `d${i}`);
const vectors = ids.map((_, i) => new Float32Array(vectorOf(CORPUS, i)));
const batches = Array.from({ length: WRITE_ROUNDS }, (_, round) =>
  Array.from({ length: 10 }, (_, i) => ({
    id: `w${round}-${i}`,
    text: `written ${round} ${i}`,
    vector: vectorOf(CORPUS, 50_000_000 + round * 10 + i),
  })));
const queries = Array.from({ length: QUERIES }, (_, q) => new Float32Array(vectorOf(CORPUS, 10_000_000 + q)));

// The truth: an exact scan of the corpus (the writes are deleted again before any search).
const corpus = new Float32Array(DOCS * DIMS);
vectors.forEach((vector, i) => corpus.set(vector, i * DIMS));
const queryMatrix = new Float32Array(QUERIES * DIMS);
queries.forEach((query, q) => queryMatrix.set(query, q * DIMS));
const exact = exactSearch(corpus, queryMatrix, DIMS, 10, MetricKind.Cos);
const truth = queries.map((_, q) => new Set(Array.from(exact.keys.subarray(q * 10, q * 10 + 10), (k) => `d${k}`)));
const recall = (found: string[][]) =>
  found.reduce((sum, ids, q) => sum + ids.filter((id) => truth[q]!.has(id)).length, 0) / (QUERIES * 10);

// quire: loaded over HTTP, searched once (which loads its state), then settled.
const ours = await (async () => {
  // Room for a million documents' state beside the snapshot it loads from (the default budget is a quarter of RAM).
  const settings = { SEARCH_CACHE_MB: String(16 * 1024) };
  await using server = await startClientVectorServer(
    new URL("../..", import.meta.url).pathname,
    await clientVectorEnvironment(settings),
  );
  const loaded = await loadClientVectors(server, CORPUS, DOCS);
  await ok(server, { action: "search", indexName: CORPUS, mode: "vector", vector: Array.from(queries[0]!) });
  const settled = await settle(server);
  const upsert: number[] = [];
  const remove: number[] = [];
  for (const docs of batches) {
    upsert.push(await timed(() => ok(server, { action: "addDocs", indexName: CORPUS, docs, options: { wait: true } })));
    const docIds = docs.map((doc) => doc.id);
    remove.push(await timed(() => ok(server, { action: "deleteDocs", indexName: CORPUS, docIds })));
  }
  const search: number[] = [];
  const found: string[][] = [];
  for (const query of queries) {
    const started = performance.now();
    const body = { action: "search", indexName: CORPUS, mode: "vector", vector: Array.from(query) };
    const result = await ok<{ hits: { id: string }[] }>(server, body);
    search.push(performance.now() - started);
    found.push(result.hits.map((hit) => hit.id));
  }
  return { loaded, settled, upsert, delete: remove, search, found, rss: await rssMiB(server.pid) };
})();
line(
  "quire",
  `${DOCS} ${CORPUS} ${DIMS}-d client vectors loaded over HTTP in ${(ours.loaded / 1000).toFixed(1)} s ` +
    `(${(DOCS / ours.loaded * 1000).toFixed(0)} docs/s), settled ${ours.settled.toFixed(0)} s later`,
);
line(
  "quire",
  `upsert 10 ${ms(quantile(ours.upsert, 0.5))}, delete 10 ${ms(quantile(ours.delete, 0.5))}, ` +
    `search p50 ${ms(quantile(ours.search, 0.5))} at recall@10 ${recall(ours.found).toFixed(3)} (over HTTP); ` +
    `RSS ${ours.rss.toFixed(0)} MiB`,
);

const dir = await Deno.makeTempDir({ prefix: "quire-lancedb-" });
const peer = await runPeer(dir, {
  ids,
  vectors,
  batches,
  batchVectors: batches.map((docs) => docs.map((doc) => new Float32Array(doc.vector))),
  queries,
  searchSettings: SEARCH_SETTINGS,
});
await Deno.remove(dir, { recursive: true });
line(
  "LanceDB",
  `loaded in-process in ${(peer.load / 1000).toFixed(1)} s; ANN index (IVF_PQ, its default) built in ` +
    `${(peer.indexing / 1000).toFixed(1)} s`,
);

/** A line of LanceDB's figures against ours: its time ÷ ours, above 1 when ours is faster. */
function against(name: string, theirs: { upsert?: number[]; delete?: number[]; search: number[]; found: string[][] }) {
  const parts: string[] = [];
  for (const op of ["upsert", "delete"] as const) {
    const samples = theirs[op];
    if (samples === undefined) continue;
    const mine = quantile(ours[op], 0.5);
    parts.push(`${op} 10 ${ms(quantile(samples, 0.5))} (${(quantile(samples, 0.5) / mine).toFixed(2)}×)`);
  }
  const search = quantile(theirs.search, 0.5);
  parts.push(
    `search p50 ${ms(search)} (${(search / quantile(ours.search, 0.5)).toFixed(2)}×) at recall@10 ` +
      recall(theirs.found).toFixed(3),
  );
  line(name, parts.join(", "));
}
against("LanceDB default", peer.flat);
against("LanceDB indexed", peer.indexed);
for (const setting of peer.settings) {
  against(`LanceDB nprobes ${setting.nprobes} refine ${setting.refineFactor}`, setting);
}
console.log("(×: LanceDB's median ÷ ours; above 1, ours is faster)");
