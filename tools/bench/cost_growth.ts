/**
 * `deno task bench:growth`: how search latency and memory grow with the index (issue 16's target 9). For 10,000 and
 * 100,000 documents (and 1,000,000 with `--large`), each in a fresh server: the benchmark's texts (20-60 words) with
 * near-random 384-d client vectors (`--corpus clustered`: vectors around 100 centres; `--docs N`: that size alone),
 * loaded 1,000 per `addDocs`, beside an index of 1,000 such documents; then, once settled, the p50 of vector, fulltext
 * and hybrid searches at 8 clients, the server's RSS after them, vector and hybrid recall@10 against the exhaustive
 * search (an exact scan, and the exhaustive fusion), and what 10-document writes cost on the index against the
 * 1,000-document one (interleaved). Then a restart over the same store, and the first search's time and RSS (issue 16's target 1).
 * Last, the growth between sizes: the exponent b of p50 ∝ nᵇ, and the plainest law it fits. With `--before <dir>`, each
 * size runs first on a server started from another checkout (e.g. a git worktree of an earlier commit), and the ratios
 * follow.
 */
import { parseArgs } from "node:util";
import type { ServerProcess } from "../../tests/_server_process.ts";
import { line, ok, rssMiB, timed } from "./_bench_helpers.ts";
import { benchDocs, ms, quantile } from "./_corpus.ts";
import {
  clientVectorEnvironment,
  type Corpus,
  DIMS,
  graphInsertsWaiting,
  loadClientVectors,
  recallAgainstExhaustive,
  SEARCH_CLIENTS,
  type SearchMode,
  searchP50,
  settle,
  startClientVectorServer,
  vectorOf,
} from "./_client_vectors.ts";

const args = parseArgs({
  args: Deno.args,
  options: {
    large: { type: "boolean", default: false },
    before: { type: "string" },
    corpus: { type: "string", default: "near-random" },
    docs: { type: "string" },
  },
});
const SIZES = args.values.docs !== undefined
  ? [Number(args.values.docs)]
  : args.values.large
  ? [10_000, 100_000, 1_000_000]
  : [10_000, 100_000];
if (args.values.corpus !== "near-random" && args.values.corpus !== "clustered") {
  throw new Error(`--corpus takes near-random or clustered, not ${args.values.corpus}`);
}
const CORPUS: Corpus = args.values.corpus;
const RECALL_QUERIES = 100;
/** The documents of the index that writes are compared with, and the 10-document writes timed on each index. */
const SMALL_DOCS = 1_000;
const WRITE_ROUNDS = 20;
const MODES: SearchMode[] = ["vector", "fulltext", "hybrid"];
type Mode = SearchMode;

/** The plainest growth law that an exponent b (of nᵇ) fits. */
function law(exponent: number): string {
  if (exponent < 0.15) return "flat or log n";
  if (exponent < 0.35) return "between log n and √n";
  if (exponent < 0.7) return "about √n";
  if (exponent < 1.2) return "about n";
  return "faster than n";
}

/**
 * The medians of 10-document `addDocs` and `deleteDocs` (each waits for its write) on `indexName` and on `small`, in
 * rounds that alternate which goes first.
 */
async function writeCosts(server: ServerProcess, indexName: string): Promise<string> {
  const times = new Map<string, number[]>();
  const time = async (key: string, body: Record<string, unknown>) => {
    const took = await timed(() => ok(server, body));
    times.set(key, [...times.get(key) ?? [], took]);
  };
  for (let round = 0; round < WRITE_ROUNDS; round++) {
    for (const index of round % 2 === 0 ? ["small", indexName] : [indexName, "small"]) {
      const docs = benchDocs(`w${round}-`, 5_000_000 + round * 10, 10)
        .map((doc, i) => ({ ...doc, vector: vectorOf(CORPUS, 30_000_000 + round * 10 + i) }));
      await time(`${index} add`, { action: "addDocs", indexName: index, docs });
      await time(`${index} delete`, { action: "deleteDocs", indexName: index, docIds: docs.map((doc) => doc.id) });
    }
  }
  const median = (key: string) => quantile(times.get(key)!, 0.5);
  return ["add", "delete"].map((op) => {
    const [small, large] = [median(`small ${op}`), median(`${indexName} ${op}`)];
    return `${op}Docs ${ms(large)}, ${(large / small).toFixed(2)}× its ${ms(small)} at ${SMALL_DOCS} docs`;
  }).join("; ");
}

const here = new URL("../..", import.meta.url).pathname;
/** Each server's label (what its lines start with) and checkout. */
const roots: [string, string][] = args.values.before === undefined
  ? [["", here]]
  : [["before ", args.values.before], ["after ", here]];
const figures = new Map<string, Record<Mode | "rss", number>>();
for (const docs of SIZES) {
  for (const [name, root] of roots) {
    const env = await clientVectorEnvironment();
    let key: string;
    {
      await using server = await startClientVectorServer(root, env);
      key = server.key;
      const took = await loadClientVectors(server, CORPUS, docs, { prose: true });
      line(
        `${name}${docs} docs`,
        `loaded in ${(took / 1000).toFixed(1)} s (${Math.round(docs / took * 1000)} docs/s, ${DIMS}-d)`,
      );
      await loadClientVectors(server, CORPUS, SMALL_DOCS, { prose: true, indexName: "small" });
      const waited = await settle(server);
      line(
        `${name}${docs} docs`,
        `settled in ${waited.toFixed(0)} s, ${await graphInsertsWaiting(server)} vectors waiting for the graph`,
      );
      const row = { rss: 0 } as Record<Mode | "rss", number>;
      for (const mode of MODES) {
        await searchP50(server, CORPUS, mode);
        row[mode] = await searchP50(server, CORPUS, mode);
      }
      row.rss = await rssMiB(server.pid);
      figures.set(`${name}${docs}`, row);
      line(
        `${name}${docs} docs`,
        `p50 at ${SEARCH_CLIENTS} clients: ${MODES.map((mode) => `${mode} ${ms(row[mode])}`).join(", ")}; ` +
          `RSS ${Math.round(row.rss)} MiB; recall@10 against exhaustive: vector ${
            (await recallAgainstExhaustive(server, CORPUS, "vector", RECALL_QUERIES)).toFixed(3)
          }, hybrid ${(await recallAgainstExhaustive(server, CORPUS, "hybrid", RECALL_QUERIES)).toFixed(3)}`,
      );
      line(`${name}${docs} docs`, `10-doc writes (medians): ${await writeCosts(server, CORPUS)}`);
    }
    // The server above has stopped (SIGTERM); the same checkout starts over the same store.
    const restarted = performance.now();
    await using server = await startClientVectorServer(root, env, key);
    const listening = performance.now() - restarted;
    const vector = vectorOf(CORPUS, 40_000_000);
    const first = await timed(() => ok(server, { action: "search", indexName: CORPUS, mode: "vector", vector }));
    line(
      `${name}${docs} docs`,
      `restarted: listening ${ms(listening)}, first vector search ${ms(first)}; RSS ${
        Math.round(await rssMiB(server.pid))
      } MiB`,
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
