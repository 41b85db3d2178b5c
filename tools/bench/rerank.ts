/**
 * `deno task bench:rerank`: what `rerank` adds to a search. In one process (`createQuireHandler`), an index of 2,000
 * short documents on a generated one-layer embedding model, and a generated cross-encoder of MiniLM-L6's shape (6
 * layers, hidden 384, 12 heads, intermediate 1536, BERT's vocabulary size) at q8, as the built-in `svc-rerank` is. One
 * client sends 3-word hybrid searches (`limit` 10), in turns without and with `rerank` (`topN` 50 by default, so 50
 * hits are rescored), and takes the p50 and p90 of each one's `tookMs`. Every word of the generated vocabulary is one
 * token, so a pair of a 3-word query and a 12-word hit is 18 tokens with `[CLS]` and two `[SEP]`.
 *
 *   deno task bench:rerank                                  # 200 searches each; 12-word hits; q8
 *   deno task bench:rerank --words 32 --top-n 20 --dtype fp32 --searches 100
 *   deno task bench:rerank --threads 1                      # cores a model run may use (default: all)
 *   deno task bench:rerank --before ../quire-old            # also the same service from another checkout, in turns
 *
 * With `--before <dir>`, a second service is built in the same process from that checkout's `src/` (e.g. a copy of an
 * earlier commit, with this `node_modules` linked in), and every query is searched on both, so that the two are
 * measured under the same load of the machine.
 */
import { parseArgs } from "node:util";
import { resolve } from "node:path";
import * as quireHandler from "../../src/quire_handler.ts";
import type { ModelRegistry } from "../../src/embedding/model_registry.ts";
import { MINILM_SHAPE, TINY_BERT, VOCAB_WORDS, writeBertModel } from "../tiny_bert.ts";
import { coresBusyDuring, line } from "./_bench_helpers.ts";
import { ms, quantile } from "./_corpus.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    searches: { type: "string", default: "200" },
    words: { type: "string", default: "12" },
    "top-n": { type: "string", default: "50" },
    dtype: { type: "string", default: "q8" },
    threads: { type: "string" },
    before: { type: "string" },
  },
});
const SEARCHES = Number(values.searches);
const WORDS = Number(values.words);
const TOP_N = Number(values["top-n"]);
const DTYPE = values.dtype === "fp32" ? "fp32" : "q8";
const THREADS = values.threads === undefined ? undefined : Number(values.threads);
const DOCS = 2_000;
const WARM_UP = 20;
const KEY = "bench-key";

type QuireHandlerModule = typeof quireHandler;

/** A search on one service: its `tookMs`. */
type Search = (query: string, reranked: boolean) => Promise<number>;

/** A deterministic pseudo-random generator, so that runs search the same texts. */
function random(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
}

const next = random(44);
const wordsOf = (count: number) =>
  Array.from({ length: count }, () => VOCAB_WORDS[Math.floor(next() * VOCAB_WORDS.length)]).join(" ");

/** A service of `module` over `models` with the bench's index, its search, and how to close it. */
async function openBench(
  module: QuireHandlerModule,
  models: ModelRegistry,
  dir: string,
  docs: { id: string; text: string }[],
): Promise<{ search: Search; close(): Promise<void> }> {
  const settings = { MODEL_CACHE_DIR: `${dir}/cache`, ALLOW_REMOTE_MODELS: "false", LOG_REQUESTS: "false" };
  const config = module.configOf(settings);
  const embedder = module.embedderOf(models, config, THREADS);
  const quire = await module.openService({ config, embedder, project: { id: "bench", key: KEY } });
  const call = async <T>(body: Record<string, unknown>): Promise<T> => {
    const response = await quire.handler(
      new Request("http://quire/manage", {
        method: "POST",
        headers: { "content-type": "application/json", "x-service-version": "v1", "x-project-key": KEY },
        body: JSON.stringify({ projectId: "bench", ...body }),
      }),
    );
    if (!response.ok) throw new Error(`${body.action}: ${response.status} ${await response.text()}`);
    return await response.json() as T;
  };
  await call({ action: "createIndex", indexName: "bench", docs });
  const rerank = { modelId: "svc-rerank", topN: TOP_N };
  const search: Search = async (query, reranked) => {
    const body = { action: "search", indexName: "bench", query, limit: 10, ...(reranked ? { rerank } : {}) };
    const { tookMs, hits } = await call<{ tookMs: number; hits: { rerankScore?: number }[] }>(body);
    if (reranked && hits[0]?.rerankScore === undefined) throw new Error("A reranked search has no rerankScore");
    return tookMs;
  };
  return {
    search,
    async close() {
      await quire.close();
      await embedder.dispose();
    },
  };
}

const dir = await Deno.makeTempDir({ prefix: "quire-bench-rerank-" });
try {
  let started = performance.now();
  await writeBertModel(`${dir}/embed`, TINY_BERT);
  await writeBertModel(`${dir}/rerank`, { ...MINILM_SHAPE, seed: 13 }, { crossEncoder: "pooled", quantized: true });
  line("models", `generated in ${ms(performance.now() - started)}`);
  const models: ModelRegistry = {
    "svc-minilm": { source: `${dir}/embed`, version: "bench-1" },
    "svc-rerank": { kind: "reranker", source: `${dir}/rerank`, version: "bench-1", dtype: DTYPE },
  };
  const docs = Array.from({ length: DOCS }, (_, i) => ({ id: `d${i}`, text: wordsOf(WORDS) }));
  const checkouts: [string, QuireHandlerModule][] = [["this", quireHandler]];
  if (values.before !== undefined) {
    const url = new URL(`file://${resolve(values.before, "src/quire_handler.ts")}`);
    checkouts.unshift(["before", await import(url.href)]);
  }
  const benches: { name: string; search: Search; close(): Promise<void> }[] = [];
  await using _closed = {
    async [Symbol.asyncDispose]() {
      for (const bench of benches) await bench.close();
    },
  };
  for (const [name, module] of checkouts) {
    const bench = { name, ...await openBench(module, models, `${dir}/${name}`, docs) };
    benches.push(bench);
    started = performance.now();
    await bench.search(wordsOf(3), true);
    line(`first rerank${checkouts.length > 1 ? `, ${name}` : ""}`, `${ms(performance.now() - started)} (loads it)`);
  }
  for (let i = 0; i < WARM_UP; i++) {
    for (const bench of benches) for (const reranked of [false, true]) await bench.search(wordsOf(3), reranked);
  }

  const samples = benches.map(() => ({ plain: [] as number[], reranked: [] as number[] }));
  const busy = await coresBusyDuring(async () => {
    for (let i = 0; i < SEARCHES; i++) {
      const query = wordsOf(3);
      // Alternating which goes first, so that neither always follows the other's work.
      const turns = benches.flatMap((_, b) => [[b, false], [b, true]] as const);
      for (const [b, withRerank] of i % 2 === 0 ? turns : turns.toReversed()) {
        const own = samples[b]!;
        (withRerank ? own.reranked : own.plain).push(await benches[b]!.search(query, withRerank));
      }
    }
  });
  const p = (samples: number[]) => `p50 ${ms(quantile(samples, 0.5))}, p90 ${ms(quantile(samples, 0.9))}`;
  const adds = samples.map(({ plain, reranked }) => quantile(reranked, 0.5) - quantile(plain, 0.5));
  benches.forEach(({ name }, b) => {
    const { plain, reranked } = samples[b]!;
    const of = benches.length > 1 ? `, ${name}` : "";
    line(`search${of}`, `${p(plain)} (hybrid, ${DOCS} docs of ${WORDS} words, limit 10)`);
    line(`rerank ${TOP_N} ${DTYPE}${of}`, `${p(reranked)}`);
    line(
      `rerank adds${of}`,
      `${ms(adds[b]!)} p50 for ${TOP_N} pairs of ${WORDS + 6} tokens ` +
        `(MiniLM-L6 shape, ${DTYPE}, ${THREADS ?? "default"} threads; ${SEARCHES} searches each)`,
    );
  });
  if (benches.length > 1) line("this / before", `${(adds[1]! / adds[0]!).toFixed(2)}× what rerank adds (p50)`);
  line("cores busy", `machine ${busy.machine.toFixed(2)}, this process ${busy.client.toFixed(2)}`);
} finally {
  await Deno.remove(dir, { recursive: true });
}
