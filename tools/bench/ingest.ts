/**
 * `deno task bench:ingest`: how fast a user's loader fills an index over HTTP (issue 53's target 3). For each checkout
 * (this one, and with `--before <dir>` another, e.g. a git worktree of an earlier commit) and each way of sending
 * vectors (`--vectors json|base64|both`), a server over a fresh store takes `--docs` documents (100,000 by default: 12
 * `wamerican` words and a 384-d client vector of `--corpus` each) in sequential `addDocs` of `--batch` (500), each
 * built and sent only once the last has answered. Meanwhile one client searches every 250 ms, and every eighth search
 * is checked against the exhaustive one (a filter that passes everything scores every document): every tenth of the
 * load prints its documents a second, the searches' p50 and slowest, and their recall@10; then the whole load's rate and
 * the RSS, and the RSS once the process has settled for `--settle` seconds (30; 0 skips it), with its peak meanwhile. The loader's own work (its vectors, made in a tight loop, and its requests' JSON) is part of the rates, as
 * it is of a user's.
 */
import { parseArgs } from "node:util";
import type { ServerProcess } from "../../tests/_server_process.ts";
import { anonymousMiB, line, ok, peakRssDuring, rssMiB } from "./_bench_helpers.ts";
import { dictionaryWords, quantile } from "./_corpus.ts";
import { normals } from "../../tests/_vectors.ts";
import { type Corpus, dictionaryText, DIMS, startClientVectorServer, vectorOf } from "./_client_vectors.ts";

const args = parseArgs({
  args: Deno.args,
  options: {
    docs: { type: "string", default: "100000" },
    batch: { type: "string", default: "500" },
    vectors: { type: "string", default: "both" },
    corpus: { type: "string", default: "near-random" },
    before: { type: "string" },
    settle: { type: "string", default: "30" },
  },
});
const DOCS = Number(args.values.docs);
const BATCH = Number(args.values.batch);
const CORPUS = args.values.corpus as Corpus;
const SEARCH_EVERY_MS = 250;
/** How long after the load its process is left to settle (its last snapshot, and the swap for a mapped load). */
const SETTLE_MS = Number(args.values.settle) * 1000;
const RECALL_EVERY = 8;
const here = new URL("../..", import.meta.url).pathname;
const words = await dictionaryWords();
type Encoding = "json" | "base64";
const encodings: Encoding[] = args.values.vectors === "both" ? ["json", "base64"] : [args.values.vectors as Encoding];
const checkouts = args.values.before === undefined
  ? [["after", here]]
  : [["before", args.values.before], ["after", here]];

/**
 * The `i`th vector of the corpus, as {@link vectorOf} draws it but made in a tight loop (about 10 µs), so that the
 * loader's time is mostly its requests, as a user's loader whose vectors are at hand.
 */
function loaderVector(i: number): Float32Array {
  const normal = normals(i);
  const centre = normals(1_000_000 + i % 100);
  const vector = new Float32Array(DIMS);
  let squares = 0;
  for (let d = 0; d < DIMS; d++) {
    const x = CORPUS === "clustered" ? centre() + 0.7 * normal() : normal();
    vector[d] = x;
    squares += x * x;
  }
  const scale = 1 / Math.sqrt(squares);
  for (let d = 0; d < DIMS; d++) vector[d]! *= scale;
  return vector;
}

/** One document as a loader sends it: the vector as numbers of 6 decimals (as other benches send them), or base64. */
function docOf(i: number, encoding: Encoding): Record<string, unknown> {
  const vector = loaderVector(i);
  const doc = { id: `d${i}`, text: dictionaryText(words, DOCS, i) };
  if (encoding === "base64") return { ...doc, vectorBase64: new Uint8Array(vector.buffer).toBase64() };
  return { ...doc, vector: Array.from(vector, (x) => Math.round(x * 1e6) / 1e6) };
}

/** Searches every {@link SEARCH_EVERY_MS} until stopped; each search's time and recall@10 against the exhaustive. */
function searchWhileLoading(server: ServerProcess) {
  type Result = { hits: { id: string }[] };
  const samples: { ms: number; recall: number | undefined }[] = [];
  let stopped = false;
  const running = (async () => {
    for (let i = 0; !stopped; i++) {
      const body = { action: "search", indexName: "load", mode: "vector", vector: vectorOf(CORPUS, 30_000_000 + i) };
      const started = performance.now();
      const hits = (await ok<Result>(server, body)).hits;
      const ms = performance.now() - started;
      // The exhaustive search scans every vector: one in eight is checked, so that the checks cost the load little.
      let recall: number | undefined;
      if (i % RECALL_EVERY === 0) {
        const exhaustive = new Set((await ok<Result>(server, { ...body, filter: {} })).hits.map((hit) => hit.id));
        recall = exhaustive.size === 0 ? 1 : hits.filter((hit) => exhaustive.has(hit.id)).length / exhaustive.size;
      }
      samples.push({ ms, recall });
      await new Promise((resolve) => setTimeout(resolve, SEARCH_EVERY_MS));
    }
  })();
  return {
    /** The samples since the last call. */
    take: () => samples.splice(0),
    stop: async () => {
      stopped = true;
      await running;
    },
  };
}

for (const encoding of encodings) {
  for (const [name, root] of checkouts) {
    await using server = await startClientVectorServer(root!);
    await ok(server, { action: "createIndex", indexName: "load", modelId: "client-384", docs: [] });
    const searches = searchWhileLoading(server);
    const started = performance.now();
    let tenthStarted = started;
    let tenthFrom = 0;
    const tenth = Math.max(BATCH, Math.round(DOCS / 10 / BATCH) * BATCH);
    for (let from = 0; from < DOCS; from += BATCH) {
      const docs = Array.from({ length: Math.min(BATCH, DOCS - from) }, (_, i) => docOf(from + i, encoding));
      await ok(server, { action: "addDocs", indexName: "load", docs });
      const done = Math.min(from + BATCH, DOCS);
      if (done % tenth !== 0 && done !== DOCS) continue;
      const now = performance.now();
      const taken = searches.take();
      const recalls = taken.flatMap(({ recall }) => recall === undefined ? [] : [recall]);
      const recall = recalls.length === 0
        ? "not checked"
        : (recalls.reduce((a, b) => a + b) / recalls.length).toFixed(3);
      const times = taken.map(({ ms }) => ms);
      line(
        `${name}, ${encoding}`,
        `${done}: ${((done - tenthFrom) / ((now - tenthStarted) / 1000)).toFixed(0)} docs/s; ` +
          `${taken.length} searches, p50 ${quantile(times, 0.5).toFixed(1)} ms, slowest ${
            Math.max(...times).toFixed(0)
          } ms, recall@10 ${recall}`,
      );
      tenthStarted = now;
      tenthFrom = done;
    }
    const seconds = (performance.now() - started) / 1000;
    await searches.stop();
    line(
      `${name}, ${encoding}`,
      `${DOCS} documents in ${seconds.toFixed(1)} s: ${(DOCS / seconds).toFixed(0)} docs/s; RSS ${
        (await rssMiB(server.pid)).toFixed(0)
      } MiB`,
    );
    if (SETTLE_MS === 0) continue;
    const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const [peak] = await peakRssDuring(() => rssMiB(server.pid), settle, 250);
    line(
      `${name}, ${encoding}`,
      `${SETTLE_MS / 1000} s later: RSS ${(await rssMiB(server.pid)).toFixed(0)} MiB, anonymous ${
        (await anonymousMiB(server.pid)).toFixed(0)
      }; peak meanwhile ${peak.toFixed(0)}`,
    );
  }
}
