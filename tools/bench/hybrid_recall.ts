/**
 * `deno task bench:hybrid`: in-process search costs at 100,000 documents of the benchmark's prose, with clustered
 * vectors unrelated to the texts (the hard case for hybrid, whose best fused matches are neither the nearest nor the
 * best text matches): p50 per mode over 400 queries on one thread, and the recall of hybrid's top 10 against the
 * exhaustive fusion, which scores every document. `--docs` sets the size.
 */
import { parseArgs } from "node:util";
import { loadAnnGraphs } from "../../src/search/ann_graphs.ts";
import { SearchIndex } from "../../src/search/search_index.ts";
import type { SearchQuery } from "../../src/search/search_query.ts";
import { line } from "./_bench_helpers.ts";
import { benchDocs, benchQueries, ms, quantile } from "./_corpus.ts";
import { unitVector } from "../../tests/_vectors.ts";

const args = parseArgs({ args: Deno.args, options: { docs: { type: "string" } } });
const DOCS = Number(args.values.docs ?? 100_000);
const DIMS = 384;
const QUERIES = 400;
const RECALL_QUERIES = 200;

const index = new SearchIndex({ revision: 0, graphs: await loadAnnGraphs() });
for (let from = 0; from < DOCS; from += 1_000) {
  const docs = benchDocs("d", from, Math.min(1_000, DOCS - from));
  index.apply(
    docs.map(({ id, text, metadata }, i) => ({
      id,
      doc: { text, metadata, passages: [{ start: 0, end: text.length, vector: vectorOf(from + i) }] },
    })),
    { deferGraph: true },
  );
}
index.flushGraph();
const tuning = index.vectorTuning();
if (tuning !== undefined) { while (!tuning.next().done) { /* every step at once */ } }
line("index", `${DOCS} docs × ${DIMS}-d clustered vectors; vector plan ${JSON.stringify(index.vectorPlan)}`);

const texts = benchQueries(QUERIES);
const vectors = texts.map((_, i) => vectorOf(5_000_000 + i));
const queryOf = (mode: SearchQuery["mode"], i: number): SearchQuery => ({
  mode,
  text: mode === "vector" ? "" : texts[i]!,
  vector: mode === "fulltext" ? undefined : vectors[i],
  offset: 0,
  limit: 10,
});
for (const mode of ["vector", "fulltext", "hybrid"] as const) {
  for (let i = 0; i < 50; i++) index.search(queryOf(mode, i));
  const samples = texts.map((_, i) => {
    const started = performance.now();
    index.search(queryOf(mode, i));
    return performance.now() - started;
  });
  line(mode, `p50 ${ms(quantile(samples, 0.5))}, p99 ${ms(quantile(samples, 0.99))} (in-process, one thread)`);
}
let found = 0;
for (let i = 0; i < RECALL_QUERIES; i++) {
  const query = queryOf("hybrid", i);
  // A filter that passes everything makes the search score every document.
  const exhaustive = new Set(index.search({ ...query, filter: () => true }).hits.map((hit) => hit.id));
  found += index.search(query).hits.filter((hit) => exhaustive.has(hit.id)).length;
}
line("hybrid recall@10", `${(found / (RECALL_QUERIES * 10)).toFixed(3)} against the exhaustive fusion (target ≥ 0.95)`);

function vectorOf(seed: number): Float32Array {
  return Float32Array.from(unitVector(seed, DIMS, true));
}
