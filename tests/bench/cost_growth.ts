/**
 * `deno task bench:growth`: how search latency and memory grow with the index (issue 16's target 9). For 10,000 and
 * 100,000 documents (and 1,000,000 with `--large`), each in a fresh server: the benchmark's texts (20-60 words) with
 * near-random 384-d client vectors, loaded 1,000 per `addDocs`; then, once settled, the p50 of vector, fulltext and
 * hybrid searches at 8 clients, the server's RSS after them, and hybrid's recall@10 against the exhaustive fusion.
 * Last, the growth between sizes: the exponent b of p50 ∝ nᵇ, and the plainest law it fits. With `--before <dir>`, each
 * size runs first on a server started from another checkout (e.g. a git worktree of an earlier commit), and the ratios
 * follow.
 */
import { parseArgs } from "node:util";
import type { ServerProcess } from "../_server_process.ts";
import { line, ok, rssMiB } from "./_bench_helpers.ts";
import { benchQueries, ms } from "./_corpus.ts";
import {
  DIMS,
  graphInsertsWaiting,
  loadClientVectors,
  SEARCH_CLIENTS,
  type SearchMode,
  searchP50,
  settle,
  startClientVectorServer,
  vectorOf,
} from "./_client_vectors.ts";

const args = parseArgs({
  args: Deno.args,
  options: { large: { type: "boolean", default: false }, before: { type: "string" } },
});
const SIZES = args.values.large ? [10_000, 100_000, 1_000_000] : [10_000, 100_000];
const RECALL_QUERIES = 100;
const MODES: SearchMode[] = ["vector", "fulltext", "hybrid"];
type Result = { hits: { id: string }[] };
type Mode = SearchMode;

/** The plainest growth law that an exponent b (of nᵇ) fits. */
function law(exponent: number): string {
  if (exponent < 0.15) return "flat or log n";
  if (exponent < 0.35) return "between log n and √n";
  if (exponent < 0.7) return "about √n";
  if (exponent < 1.2) return "about n";
  return "faster than n";
}

/** The share of hybrid's top 10 that the exhaustive fusion (a filter makes the search score every document) holds. */
async function hybridRecall(server: ServerProcess): Promise<number> {
  const texts = benchQueries(RECALL_QUERIES, 7);
  let found = 0;
  for (let i = 0; i < RECALL_QUERIES; i++) {
    const body = {
      action: "search",
      indexName: "near-random",
      mode: "hybrid",
      query: texts[i],
      vector: vectorOf("near-random", 20_000_000 + i),
    };
    const exhaustive = new Set((await ok<Result>(server, { ...body, filter: {} })).hits.map((hit) => hit.id));
    found += (await ok<Result>(server, body)).hits.filter((hit) => exhaustive.has(hit.id)).length;
  }
  return found / (RECALL_QUERIES * 10);
}

const here = new URL("../..", import.meta.url).pathname;
/** Each server's label (what its lines start with) and checkout. */
const roots: [string, string][] = args.values.before === undefined
  ? [["", here]]
  : [["before ", args.values.before], ["after ", here]];
const figures = new Map<string, Record<Mode | "rss", number>>();
for (const docs of SIZES) {
  for (const [name, root] of roots) {
    await using server = await startClientVectorServer(root);
    const took = await loadClientVectors(server, "near-random", docs, { prose: true });
    line(
      `${name}${docs} docs`,
      `loaded in ${(took / 1000).toFixed(1)} s (${Math.round(docs / took * 1000)} docs/s, ${DIMS}-d)`,
    );
    const waited = await settle(server);
    line(
      `${name}${docs} docs`,
      `settled in ${waited.toFixed(0)} s, ${await graphInsertsWaiting(server)} vectors waiting for the graph`,
    );
    const row = { rss: 0 } as Record<Mode | "rss", number>;
    for (const mode of MODES) {
      await searchP50(server, "near-random", mode);
      row[mode] = await searchP50(server, "near-random", mode);
    }
    row.rss = await rssMiB(server.pid);
    figures.set(`${name}${docs}`, row);
    line(
      `${name}${docs} docs`,
      `p50 at ${SEARCH_CLIENTS} clients: ${MODES.map((mode) => `${mode} ${ms(row[mode])}`).join(", ")}; ` +
        `RSS ${Math.round(row.rss)} MiB; hybrid recall@10 ${(await hybridRecall(server)).toFixed(3)} ` +
        `against the exhaustive fusion`,
    );
  }
}
for (const [name] of roots) {
  for (let i = 1; i < SIZES.length; i++) {
    const [from, to] = [figures.get(`${name}${SIZES[i - 1]}`)!, figures.get(`${name}${SIZES[i]}`)!];
    const growth = (key: Mode | "rss") => {
      const exponent = Math.log(to[key] / from[key]) / Math.log(SIZES[i]! / SIZES[i - 1]!);
      return `${key} ×${(to[key] / from[key]).toFixed(2)} (n^${exponent.toFixed(2)}, ${law(exponent)})`;
    };
    line(`${name}${SIZES[i - 1]} → ${SIZES[i]}`, [...MODES, "rss" as const].map(growth).join("; "));
  }
}
if (args.values.before !== undefined) {
  for (const docs of SIZES) {
    const [before, after] = [figures.get(`before ${docs}`)!, figures.get(`after ${docs}`)!];
    line(`${docs} docs`, MODES.map((mode) => `${mode} ${(before[mode] / after[mode]).toFixed(2)}× faster`).join(", "));
  }
}
