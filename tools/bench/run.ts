/**
 * `deno task bench`: the scale benchmark. It builds its own fixtures (a fast one-layer 384-d model for the corpus and
 * a model with the exact shape of all-MiniLM-L6-v2 for the embedding figure), runs `main.ts` as a real server process
 * over a fresh KV file, and prints one figure per target. The corpus is documents of 12 words of Debian's `wamerican`
 * (`apt-get install wamerican`) and the queries are of its words; the old generated vocabulary's full-text and hybrid
 * figures follow as lines marked `(old)`, on an index of its texts under the same vectors, and the passages' figures
 * (13) stay on it. `--quick` uses 10,000 documents instead of 100,000.
 *
 *   deno task bench            # 100,000 documents, about 18 minutes on 2 cores
 *   deno task bench --quick    # 10,000 documents, 4-6 minutes
 */
import { parseArgs } from "node:util";
import { Embedder } from "../../src/embedding/embedder.ts";
import { listDocs } from "../../src/storage/doc_records.ts";
import type { IndexRecord } from "../../src/storage/index_records.ts";
import { indexKey } from "../../src/storage/kv_keys.ts";
import { readSnapshotPointer } from "../../src/storage/snapshot_store.ts";
import { metricsText, type ServerProcess, startServerProcess } from "../../tests/_server_process.ts";
import { dictionaryWords, ms, quantile } from "./_corpus.ts";
import { type CoresBusy, coresBusyDuring, line, ok, rssMiB, timed, writeFastModelRegistry } from "./_bench_helpers.ts";
import { wordDocs, wordQueries } from "./_word_corpus.ts";
import { CLIENTS, fulltextVariants, modeLatencies } from "./scale_fulltext.ts";
import { measureAnalyticsCost } from "./scale_analytics.ts";
import { measureSideIndexes, SIDE_MODELS } from "./scale_side_indexes.ts";
import { measureEmbeddingThroughput } from "./embedding_throughput.ts";
import { measureMetadataThroughput } from "./metadata_throughput.ts";
import { measureTestingHarness } from "./testing_harness.ts";
import { measurePassages } from "./passage_bench.ts";
import { runPeer } from "./peer/run_peer.ts";

const { values } = parseArgs({ args: Deno.args, options: { quick: { type: "boolean", default: false } } });
const LARGE = values.quick ? 10_000 : 100_000;
const SMALL = 1_000;
const BATCH = 1_000;
const WRITE_ROUNDS = values.quick ? 10 : 20;
const QUERIES = values.quick ? 400 : 800;
const RECALL_QUERIES = 100;
const LONG_DOCS = values.quick ? 200 : 1_000;
const ANALYTICS_ROUNDS = values.quick ? 16 : 60;
const SYNONYM_ROUNDS = values.quick ? 1 : 3;
const words = await dictionaryWords();
/** The hybrid search of the cold start and of the catch-up: two words of the corpus. */
const FIRST_QUERY = wordQueries(words, 1, { length: 2, seed: 5 })[0]!;

const started = performance.now();
const dir = await Deno.makeTempDir({ prefix: "quire-bench-" });
const registry = await writeFastModelRegistry(dir);
// The server's models: the fast one, and the external one of the synonym pair beside the large index.
await Deno.writeTextFile(`${dir}/models.json`, JSON.stringify({ ...registry, ...SIDE_MODELS }));
const env = {
  HOSTNAME: "127.0.0.1",
  PORT: "0",
  DENO_KV_PATH: `${dir}/data/quire.kv`,
  MODELS_FILE: `${dir}/models.json`,
  ALLOW_REMOTE_MODELS: "false",
};
const embedder = new Embedder(registry, { cacheDir: `${dir}/cache`, allowRemote: false });

/** Vector searches per second from {@link CLIENTS} concurrent clients, after a warm-up that loads every process. */
async function searchThroughput(target: ServerProcess): Promise<{ rate: number; cores: CoresBusy }> {
  const queries = wordQueries(words, QUERIES, { seed: 11 });
  const run = async (count: number) => {
    let next = 0;
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      while (next < count) {
        const query = queries[next++ % queries.length]!;
        await ok(target, { action: "search", indexName: "large", query, mode: "vector", include: [] });
      }
    }));
  };
  await run(CLIENTS * 8);
  let took = 0;
  const cores = await coresBusyDuring(async () => took = await timed(() => run(QUERIES)));
  return { rate: QUERIES / took * 1000, cores };
}

/** The `quire_index_loads_total` samples of a server's `/metrics`, as `kind=count` pairs. */
async function loadCounts(target: ServerProcess): Promise<string> {
  const text = await metricsText(target);
  return [...text.matchAll(/^quire_index_loads_total\{kind="(\w+)"\} (\d+)/gm)].map(([, kind, n]) => `${kind}=${n}`)
    .join(", ");
}

console.log(
  `quire scale benchmark: ${LARGE} docs, 384-d, ${Deno.build.target}, ${navigator.hardwareConcurrency} cores`,
);
// The test harness first, in this process, while the machine is quiet.
for (const [target, text] of await measureTestingHarness()) line(target, text);
let server = await startServerProcess(env);
const key = server.key;
try {
  // Fixtures: the large index in 1,000-document batches, and a 1,000-document one to compare writes with.
  const ingest = await timed(async () => {
    await ok(server, { action: "createIndex", indexName: "large", docs: wordDocs(words, "doc", 0, BATCH) });
    for (let start = BATCH; start < LARGE; start += BATCH) {
      await ok(server, { action: "addDocs", indexName: "large", docs: wordDocs(words, "doc", start, BATCH) });
    }
    await ok(server, { action: "createIndex", indexName: "small", docs: wordDocs(words, "doc", 0, SMALL) });
  });
  line(
    "ingest",
    `${LARGE + SMALL} docs in ${(ingest / 1000).toFixed(1)} s (${
      ((LARGE + SMALL) / ingest * 1000).toFixed(0)
    } docs/s, embedding included)`,
  );

  // 2. Cold start: restart, then the first getIndex and the first search of the large index.
  await server.stop();
  const restart = performance.now();
  server = await startServerProcess(env, key);
  const listening = performance.now() - restart;
  const firstGetIndex = await timed(() => ok(server, { action: "getIndex", indexName: "large" }));
  const firstSearch = await timed(() => ok(server, { action: "search", indexName: "large", query: FIRST_QUERY }));
  const rssLoaded = await rssMiB(server.pid);
  line(
    "2. cold start",
    `listening ${ms(listening)}; first getIndex ${ms(firstGetIndex)}; first search (hybrid) ${ms(firstSearch)} ` +
      `(target ≤ 2000 ms); RSS with the index loaded ${rssLoaded.toFixed(0)} MiB (target ≤ 1024)`,
  );

  // 1. Write cost: 10-document addDocs and deleteDocs on the large index against the small one, interleaved.
  const writes: Record<string, number[]> = { "small add": [], "small delete": [], "large add": [], "large delete": [] };
  for (let round = 0; round < WRITE_ROUNDS; round++) {
    for (const size of round % 2 === 0 ? ["small", "large"] : ["large", "small"]) {
      const docs = wordDocs(words, `w${round}-`, 5_000_000 + round * 10, 10);
      writes[`${size} add`]!.push(await timed(() => ok(server, { action: "addDocs", indexName: size, docs })));
      const docIds = docs.map((doc) => doc.id);
      writes[`${size} delete`]!.push(await timed(() => ok(server, { action: "deleteDocs", indexName: size, docIds })));
    }
  }
  for (const op of ["add", "delete"]) {
    const small = quantile(writes[`small ${op}`]!, 0.5);
    const large = quantile(writes[`large ${op}`]!, 0.5);
    line(
      `1. ${op === "add" ? "addDocs" : "deleteDocs"} 10`,
      `median ${ms(small)} at ${SMALL} docs, ${ms(large)} at ${LARGE} docs: ${
        (large / small).toFixed(2)
      }× (target ≤ 1.5×)`,
    );
  }

  // 3. Search under load, and 14. full-text as people expect it, with queries of 2, 5 and 12 words.
  const queries = wordQueries(words, QUERIES);
  const byLength = Object.fromEntries(
    [2, 5, 12].map((length) => [`${length} words`, wordQueries(words, QUERIES, { length, seed: 100 + length })]),
  );
  line(
    "3. search vector",
    `${await modeLatencies(server, "large", "vector", { "2-4 words": queries })} (target p50 ≤ 50 ms)`,
  );
  line("3. search hybrid", `${await modeLatencies(server, "large", "hybrid", byLength)} (target p50 ≤ 100 ms)`);
  line("3. search fulltext", await modeLatencies(server, "large", "fulltext", byLength));
  for (const [name, set] of Object.entries(byLength)) {
    line(`14. fulltext ${name}`, await fulltextVariants(server, "large", set));
  }

  const recallQueries = wordQueries(words, RECALL_QUERIES, { seed: 7 });
  const served: string[][] = [];
  for (const query of recallQueries) {
    const result = await ok<{ hits: { id: string }[] }>(server, {
      action: "search",
      indexName: "large",
      query,
      mode: "vector",
      include: [],
    });
    served.push(result.hits.map((hit) => hit.id));
  }

  // 12.1 Catch-up: a second instance over the same store; its first search after a 10-doc write on the first.
  const peerInstance = await startServerProcess(env, key);
  try {
    for (const [indexName, size] of [["large", LARGE], ["small", SMALL]] as const) {
      const search = () => ok(peerInstance, { action: "search", indexName, query: FIRST_QUERY, mode: "hybrid" });
      await search();
      const warm: number[] = [];
      const first: number[] = [];
      for (let round = 0; round < WRITE_ROUNDS; round++) {
        for (let i = 0; i < 5; i++) warm.push(await timed(search));
        const docs = wordDocs(words, `cu${indexName}${round}-`, 8_000_000 + round * 10, 10);
        await ok(server, { action: "addDocs", indexName, docs });
        first.push(await timed(search));
      }
      const [firstMs, warmMs] = [quantile(first, 0.5), quantile(warm, 0.5)];
      line(
        "12.1 catch-up",
        `${size} docs, two instances: first search on B after a 10-doc write on A, median ${ms(firstMs)}; ` +
          `B warm median ${ms(warmMs)}: ${(firstMs / warmMs).toFixed(2)}×${size === LARGE ? " (target ≤ 3×)" : ""}`,
      );
    }
    line("12.1 loads on B", await loadCounts(peerInstance));
  } finally {
    await peerInstance.stop();
  }

  // 4. getDocs of the whole large index, streamed: the server's RSS while it streams.
  const before = await rssMiB(server.pid);
  let peak = before;
  const sampler = setInterval(async () => peak = Math.max(peak, await rssMiB(server.pid)), 25);
  let bytes = 0;
  const streamMs = await timed(async () => {
    const response = await server.call({ action: "getDocs", indexName: "large" });
    for await (const chunk of response.body!) bytes += chunk.byteLength;
  });
  clearInterval(sampler);
  line(
    "4. getDocs streamed",
    `${(bytes / 2 ** 20).toFixed(0)} MiB of JSON in ${ms(streamMs)}; server RSS ${before.toFixed(0)} → peak ` +
      `${peak.toFixed(0)} MiB (+${(peak - before).toFixed(0)})`,
  );

  // 7. A queued write: 202 at once, progress, then Ready.
  const queuedDocs = wordDocs(words, "queued", 6_000_000, 2_000);
  const accepted = await timed(() =>
    server.call({ action: "addDocs", indexName: "large", docs: queuedDocs, options: { wait: false } })
      .then((response) => response.body?.cancel())
  );
  const progress = new Set<string>();
  const readyMs = await timed(async () => {
    for (;;) {
      const view = await ok<{ status: string; progress?: { done: number; total: number } }>(server, {
        action: "getIndex",
        indexName: "large",
      });
      if (view.progress !== undefined) progress.add(`${view.progress.done}/${view.progress.total}`);
      if (view.status === "Ready") return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  line(
    "7. wait: false",
    `addDocs of ${queuedDocs.length} docs answered 202 in ${ms(accepted)}; Updating with progress ` +
      `${[...progress].join(", ")}; Ready after ${ms(readyMs)}`,
  );

  // 8. The peer's workload on our side: upsert 10, delete 10, vector top-10 search, over HTTP.
  const peerBatches = Array.from({ length: WRITE_ROUNDS }, (_, i) => wordDocs(words, "peer", 7_000_000 + i * 10, 10));
  const ours = { upsert: [] as number[], delete: [] as number[], search: [] as number[] };
  for (const docs of peerBatches) {
    ours.upsert.push(await timed(() => ok(server, { action: "addDocs", indexName: "large", docs })));
    const docIds = docs.map((doc) => doc.id);
    ours.delete.push(await timed(() => ok(server, { action: "deleteDocs", indexName: "large", docIds })));
  }
  for (const query of recallQueries) {
    ours.search.push(await timed(() => ok(server, { action: "search", indexName: "large", query, mode: "vector" })));
  }

  // 5. Metadata reads against a bare Deno.serve echo, with wrk.
  const throughput = await measureMetadataThroughput(server, { indexName: "large" });
  line("5. getIndex rps", throughput);

  // 12.7 Vector search throughput: one process, then PROCESSES=2 on one port over the same store.
  const one = await searchThroughput(server);
  await server.stop();
  server = await startServerProcess({ ...env, PROCESSES: "2", LOG_REQUESTS: "false" }, key);
  const two = await searchThroughput(server);
  const busy = ({ cores }: { cores: CoresBusy }) =>
    `${cores.machine.toFixed(1)} cores busy, ${cores.client.toFixed(1)} of them the clients`;
  line(
    "12.7 processes",
    `vector search, ${CLIENTS} clients: 1 process ${one.rate.toFixed(0)} q/s (${busy(one)}), PROCESSES=2 ` +
      `${two.rate.toFixed(0)} q/s (${busy(two)}): ${(two.rate / one.rate).toFixed(2)}× (target ≥ 1.6×)`,
  );
  await server.stop();

  // Analytics: a process that records searches against one that does not, over the same store.
  const analyticsQueries = wordQueries(words, QUERIES / 4, { length: 5, seed: 17 });
  line(
    "analytics",
    await measureAnalyticsCost({ env, key, indexName: "large", queries: analyticsQueries, rounds: ANALYTICS_ROUNDS }),
  );

  // Recall, the snapshot, and the vectors the peer gets: read from the store the server left.
  const kv = await Deno.openKv(env.DENO_KV_PATH);
  const record = (await kv.get<IndexRecord>(indexKey("default", "large"))).value!;
  const pointer = await readSnapshotPointer(kv, record.id);
  const ids: string[] = [];
  const vectors: Float32Array[] = [];
  for await (const [id, doc] of listDocs(kv, record.id)) {
    // The corpus only: the recall queries were answered before the queued write (7) added its documents.
    if (!id.startsWith("doc")) continue;
    ids.push(id);
    vectors.push(doc.passages[0]!.vector);
  }
  kv.close();
  line(
    "2. snapshot",
    `${((pointer?.bytes ?? 0) / 2 ** 20).toFixed(0)} MiB at revision ${pointer?.revision} of ${record.revision}; ` +
      `vectors stored once as float32 (${(vectors.length * 384 * 4 / 2 ** 20).toFixed(0)} MiB of it)`,
  );
  const queryVectors = await embedder.embed("svc-minilm", recallQueries);
  let found = 0;
  queryVectors.forEach((query, q) => {
    const scores = vectors.map((vector) => {
      let dot = 0;
      for (let i = 0; i < vector.length; i++) dot += query[i]! * vector[i]!;
      return dot;
    });
    const best = scores.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]! || (ids[a]! < ids[b]! ? -1 : 1));
    const truth = new Set(best.slice(0, 10).map((i) => ids[i]!));
    found += served[q]!.filter((id) => truth.has(id)).length;
  });
  line(
    "3. recall@10",
    `${
      (found / (RECALL_QUERIES * 10)).toFixed(3)
    } against exact brute force, ${RECALL_QUERIES} queries (target ≥ 0.95)`,
  );

  // 8. The peer, in-process, on the same vectors and batches.
  const batchVectors = await Promise.all(
    peerBatches.map((docs) => embedder.embed("svc-minilm", docs.map((d) => d.text))),
  );
  const peer = await runPeer(dir, { ids, vectors, batches: peerBatches, batchVectors, queries: queryVectors });
  for (const op of ["upsert", "delete", "search"] as const) {
    const mine = quantile(ours[op], 0.5);
    const theirs = quantile(peer.indexed[op], 0.5);
    line(
      `8. ${op} vs LanceDB`,
      `median ${ms(mine)} ours over HTTP, ${ms(theirs)} LanceDB in-process: ${(theirs / mine).toFixed(2)}× ` +
        (mine < theirs ? "(ours ahead)" : "(LanceDB ahead)"),
    );
  }
  line("8. LanceDB setup", peer.setup);

  // 13. Long documents as passages, on a fresh start of the server.
  server = await startServerProcess(env, key);
  const passageLines = await measurePassages(server, {
    docs: LONG_DOCS,
    large: { name: "large", size: LARGE },
    small: { name: "small", size: SMALL },
    rounds: WRITE_ROUNDS,
    kvPath: env.DENO_KV_PATH,
    embedder,
    modelId: "svc-minilm",
  });
  // Its documents stay of the old generated vocabulary (a token a word): wamerican words tokenize into about 8 tokens
  // each with the fast model's vocabulary, so that documents of 2,000 of them would make 8 times the passages to embed.
  for (const [target, text] of passageLines) line(target, `generated vocabulary: ${text}`);

  // Beside the large index, its vectors under other texts: the old corpus's, and the same texts twice for synonyms.
  await measureSideIndexes(server, {
    words,
    vectors: new Map(ids.map((id, i) => [id, vectors[i]!])),
    size: LARGE,
    queries: QUERIES,
    synonymQueries: QUERIES * 3 / 8,
    synonymRounds: SYNONYM_ROUNDS,
  });
  await server.stop();

  // 6 and 10. Embedding throughput on the MiniLM-shaped model, fp32 and q8.
  for (const [target, text] of await measureEmbeddingThroughput(dir)) line(target, text);
} finally {
  await server.stop().catch(() => {});
  await embedder.dispose();
}
await Deno.remove(dir, { recursive: true });
console.log(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
