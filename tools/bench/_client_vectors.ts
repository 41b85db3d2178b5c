/**
 * What the benchmarks on client vectors share: the corpora, a server with an external 384-d model, the bulk load over
 * HTTP, the wait until the server's background work after a load is done, and the p50 of searches at 8 clients.
 */
import { testModels } from "../../tests/_helpers.ts";
import {
  metricsText,
  PERMISSIONS,
  serverEnvironment,
  type ServerProcess,
  startServerProcess,
} from "../../tests/_server_process.ts";
import { ok, timed } from "./_bench_helpers.ts";
import { unitVector } from "../../tests/_vectors.ts";
import { benchDocs, benchQueries, quantile } from "./_corpus.ts";
import { mulberry32 } from "../../src/util/seeded_random.ts";

/** The dimensions of the client vectors, those of MiniLM. */
export const DIMS = 384;
/** Documents per `addDocs` of a bulk load. */
const BATCH = 1_000;
/**
 * `addDocs` requests a bulk load keeps in flight: it builds and sends its next batch (70 ms for 1,000 documents of 384-d
 * vectors as JSON) while the server applies the last, as a bulk loader does.
 */
const LOADS_IN_FLIGHT = 2;

/** Vectors close to random (uniform on the sphere), or around one of 100 centres. */
export type Corpus = "near-random" | "clustered";

/**
 * The `i`th vector of a corpus, of {@link DIMS} dimensions unless told, the same in every run, rounded as a client's
 * JSON would carry it.
 */
export function vectorOf(corpus: Corpus, seed: number, dims = DIMS): number[] {
  return unitVector(seed, dims, corpus === "clustered").map((x) => Math.round(x * 1e6) / 1e6);
}

/**
 * An environment for a server over a fresh store, with the model `client-<dims>` (`client-384` by default) for client
 * vectors, and `settings`.
 */
export async function clientVectorEnvironment(
  settings: Record<string, string> = {},
  dims = DIMS,
): Promise<Record<string, string>> {
  const env = { ...await serverEnvironment(), ...settings };
  await Deno.writeTextFile(
    env.MODELS_FILE!,
    JSON.stringify({ ...await testModels(), [`client-${dims}`]: { version: "1", dimensions: dims } }),
  );
  return env;
}

/**
 * Starts `main.ts` of the checkout at `root` with `env` (a fresh {@link clientVectorEnvironment} by default); `key` is
 * the project's, when the store already has it (a restart). `onStdout` hears what the server writes (its request log).
 */
export async function startClientVectorServer(
  root: string,
  env?: Record<string, string>,
  key = "",
  onStdout?: (text: string) => void,
): Promise<ServerProcess> {
  env ??= await clientVectorEnvironment();
  return await startServerProcess(env, key, { args: ["run", ...PERMISSIONS, `${root}/main.ts`], onStdout });
}

/**
 * Creates the index `corpus` (or `indexName`) and loads documents `d0`… with the corpus's first `docs` vectors, 1,000
 * per `addDocs`; returns the milliseconds the load took. With `prose`, the documents carry the benchmark's texts and
 * metadata.
 */
export async function loadClientVectors(
  server: ServerProcess,
  corpus: Corpus,
  docs: number,
  { prose = false, inFlight = LOADS_IN_FLIGHT, indexName = corpus as string } = {},
): Promise<number> {
  await ok(server, {
    action: "createIndex",
    indexName,
    modelId: "client-384",
    docs: [],
    options: { wait: true },
  });
  let next = 0;
  const send = async () => {
    while (next < docs) {
      const from = next;
      next += BATCH;
      const count = Math.min(BATCH, docs - from);
      const texts = prose
        ? benchDocs("d", from, count)
        : Array.from({ length: count }, (_, i) => ({ id: `d${from + i}`, text: `document ${from + i}` }));
      const batch = texts.map((doc, i) => ({ ...doc, vector: vectorOf(corpus, from + i) }));
      await ok(server, { action: "addDocs", indexName, docs: batch, options: { wait: true } });
    }
  };
  return await timed(() => Promise.all(Array.from({ length: inFlight }, send)));
}

/**
 * Waits until the server has written no snapshot for 10 s and no vector waits for the graph (its background work after
 * a load is then done, but for what a search starts), at most 5 minutes; returns the seconds waited.
 */
export async function settle(server: ServerProcess): Promise<number> {
  const started = performance.now();
  const sample = async () => {
    const text = await metricsText(server);
    return { written: text.match(/^quire_snapshots_written_total (\d+)/m)?.[1], waiting: insertsWaiting(text) };
  };
  let last = await sample();
  let quietSince = performance.now();
  while (
    (performance.now() - quietSince < 10_000 || last.waiting > 0) && performance.now() - started < 300_000
  ) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const now = await sample();
    if (now.written !== last.written) quietSince = performance.now();
    last = now;
  }
  return (performance.now() - started) / 1000;
}

/** How many vectors wait to join the server's graphs, from its metrics. */
export async function graphInsertsWaiting(server: ServerProcess): Promise<number> {
  return insertsWaiting(await metricsText(server));
}

function insertsWaiting(metrics: string): number {
  return Number(metrics.match(/^quire_graph_inserts_waiting (\d+)/m)?.[1] ?? "0");
}

/** How many searches {@link searchP50} times, and how many clients send them at once. */
export const SEARCHES = 400;
export const SEARCH_CLIENTS = 8;

/** A search mode the benches time. */
export type SearchMode = "vector" | "fulltext" | "hybrid";

/**
 * The p50 of {@link SEARCHES} searches of `mode` on the index `corpus` by {@link SEARCH_CLIENTS} concurrent clients:
 * the benchmark's queries, and client vectors unlike any stored one.
 */
export async function searchP50(server: ServerProcess, corpus: Corpus, mode: SearchMode): Promise<number> {
  const texts = benchQueries(SEARCHES);
  const found: number[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: SEARCH_CLIENTS }, async () => {
    while (next < SEARCHES) {
      const i = next++;
      const body = {
        action: "search",
        indexName: corpus,
        mode,
        ...(mode === "vector" ? {} : { query: texts[i] }),
        ...(mode === "fulltext" ? {} : { vector: vectorOf(corpus, 10_000_000 + i) }),
      };
      found.push(await timed(() => ok(server, body)));
    }
  }));
  return quantile(found, 0.5);
}

/**
 * The share of the top 10 of `queries` searches of `mode` on the index `corpus` (vectors unlike any stored one, and the
 * benchmark's queries for `hybrid`) that the same searches hold when a filter that passes everything makes them score
 * every document exactly.
 */
export async function recallAgainstExhaustive(
  server: ServerProcess,
  corpus: Corpus,
  mode: "vector" | "hybrid",
  queries: number,
): Promise<number> {
  type Result = { hits: { id: string }[] };
  const texts = benchQueries(queries, 7);
  let found = 0;
  for (let i = 0; i < queries; i++) {
    const body = {
      action: "search",
      indexName: corpus,
      mode,
      ...(mode === "hybrid" ? { query: texts[i] } : {}),
      vector: vectorOf(corpus, 20_000_000 + i),
    };
    const exhaustive = new Set((await ok<Result>(server, { ...body, filter: {} })).hits.map((hit) => hit.id));
    found += (await ok<Result>(server, body)).hits.filter((hit) => exhaustive.has(hit.id)).length;
  }
  return found / (queries * 10);
}

/** Words a text of {@link loadDictionaryIndex} holds. */
const WORDS_PER_TEXT = 12;

/**
 * The text of document `doc` of an index loaded by {@link loadDictionaryIndex} with `seed`: 12 words drawn uniformly
 * from `words`, so that a text's words are as varied as a real vocabulary makes them.
 */
export function dictionaryText(words: readonly string[], seed: number, doc: number): string {
  const next = mulberry32(seed * 1_000_003 + doc);
  return Array.from({ length: WORDS_PER_TEXT }, () => words[Math.floor(next() * words.length)]).join(" ");
}

/**
 * Loads the index `name` of `docs` documents in sequential `addDocs` of 1,000, as a user's loader would: texts of
 * {@link dictionaryText} with `seed`, and near-random client vectors.
 */
export async function loadDictionaryIndex(
  server: ServerProcess,
  name: string,
  docs: number,
  words: readonly string[],
  seed = docs + name.length,
): Promise<void> {
  await ok(server, { action: "createIndex", indexName: name, modelId: "client-384", docs: [] });
  for (let from = 0; from < docs; from += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, docs - from) }, (_, i) => ({
      id: `d${from + i}`,
      text: dictionaryText(words, seed, from + i),
      vector: vectorOf("near-random", from + i),
    }));
    await ok(server, { action: "addDocs", indexName: name, docs: batch });
  }
}
