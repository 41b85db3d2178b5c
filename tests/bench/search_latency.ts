/**
 * Search latency benchmark: a real server on loopback over a temporary KV file, an index of generated documents
 * embedded with a generated 384-d model, and sequential queries in each mode. Prints p50/p99 per mode.
 *
 *   deno task bench            # 10,000 documents
 *   deno task bench --docs 2000
 */
import { parseArgs } from "node:util";
import { Embedder } from "../../src/embedding/embedder.ts";
import { startTestServer, type TestServer } from "../_helpers.ts";
import { FAST_384_SHAPE, VOCAB_WORDS, writeBertModel } from "../_model.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { docs: { type: "string", default: "10000" }, queries: { type: "string", default: "300" } },
});
const DOCS = Number(values.docs);
const QUERIES = Number(values.queries);
const BATCH = 1000;

/** A deterministic pseudo-random generator, so that runs compare. */
function random(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
}

const next = random(42);
const words = VOCAB_WORDS.filter((word) => word.length > 2);

/** A word drawn with a Zipf-like skew, as in natural text. */
function word(): string {
  return words[Math.floor(words.length * next() ** 2.5)]!;
}

function sentence(length: number): string {
  return Array.from({ length }, word).join(" ");
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

async function measure(server: TestServer, label: string, body: (i: number) => Record<string, unknown>) {
  const times: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    const started = performance.now();
    await server.ok({ action: "search", indexName: "bench", ...body(i) });
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const p50 = percentile(times, 0.5).toFixed(1);
  const p99 = percentile(times, 0.99).toFixed(1);
  console.log(`  ${label.padEnd(18)} p50 ${p50.padStart(6)} ms   p99 ${p99.padStart(6)} ms`);
}

const dir = await Deno.makeTempDir({ prefix: "quire-bench-" });
await writeBertModel(`${dir}/model`, FAST_384_SHAPE);
const registry = { "svc-minilm": { source: `${dir}/model`, version: "bench-384-1", dtype: "fp32" as const } };
let server = await startTestServer({
  embedder: () => new Embedder(registry, { cacheDir: `${dir}/cache`, allowRemote: false }),
});
try {
  const docs = Array.from({ length: DOCS }, (_, i) => ({
    id: `doc-${i}`,
    text: sentence(20 + Math.floor(next() * 40)),
    metadata: { category: `c${i % 10}`, year: 2000 + (i % 25) },
  }));
  const ingestStarted = performance.now();
  await server.ok({ action: "createIndex", indexName: "bench", docs: docs.slice(0, BATCH) });
  for (let start = BATCH; start < DOCS; start += BATCH) {
    await server.ok({ action: "addDocs", indexName: "bench", docs: docs.slice(start, start + BATCH) });
  }
  const ingestSeconds = (performance.now() - ingestStarted) / 1000;
  await server.service.context.background.idle();
  server = await server.restart();
  const coldStarted = performance.now();
  await server.ok({ action: "search", indexName: "bench", query: "warm up", mode: "fulltext" });
  const coldMs = performance.now() - coldStarted;

  const queries = Array.from({ length: QUERIES }, () => sentence(2 + Math.floor(next() * 3)));
  console.log(`search latency over HTTP: ${DOCS} docs, 384-d, ${QUERIES} sequential queries per mode`);
  console.log(
    `  ingest ${(DOCS / ingestSeconds).toFixed(0)} docs/s; first search after restart ${coldMs.toFixed(0)} ms`,
  );
  for (const mode of ["vector", "hybrid", "fulltext"]) {
    await measure(server, mode, (i) => ({ query: queries[i], mode }));
  }
  const filter = { category: { $in: ["c1", "c2"] }, year: { $gte: 2010 } };
  await measure(server, "hybrid + filter", (i) => ({ query: queries[i], mode: "hybrid", filter }));
} finally {
  await server.close();
  await Deno.remove(dir, { recursive: true });
}
