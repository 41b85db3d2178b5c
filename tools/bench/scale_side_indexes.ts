/**
 * The scale benchmark's comparisons on indexes beside its large one, loaded without embedding (1,000 documents per
 * `addDocs`, two in flight). The old corpus: the texts of the old generated vocabulary under the vectors of the large
 * index's documents, read from the store, so that its full-text and hybrid figures differ from the large index's by the
 * texts alone. The synonym pair: the large index's own `wamerican` texts twice, one of them with 1,000 synonym entries,
 * under near-random client vectors of {@link PAIR_DIMS} dimensions, whose graphs build in seconds where 384-d ones take
 * minutes; hybrid's vector half is then cheaper than the large index's, which makes its ratio the stricter.
 */
import type { ServerProcess } from "../../tests/_server_process.ts";
import { line, ok, timed } from "./_bench_helpers.ts";
import { settle, vectorOf } from "./_client_vectors.ts";
import { type BenchDoc, benchDocs, benchQueries } from "./_corpus.ts";
import { measureSynonymCost, synonymWorkload } from "./_synonym_searches.ts";
import { wordDocs } from "./_word_corpus.ts";
import { fulltextVariants, modeLatencies } from "./scale_fulltext.ts";

const BATCH = 1_000;
/** `addDocs` requests in flight: the next batch is built and sent while the server applies the last. */
const IN_FLIGHT = 2;
/** The dimensions of the synonym pair's client vectors. */
const PAIR_DIMS = 8;
const PAIR_MODEL = `client-${PAIR_DIMS}`;

/** The external model of the synonym pair, for the server's `MODELS_FILE`. */
export const SIDE_MODELS = { [PAIR_MODEL]: { version: "1", dimensions: PAIR_DIMS } };

/** What {@link measureSideIndexes} runs on. */
export interface SideIndexOptions {
  /** The `wamerican` words of the large index's texts. */
  words: readonly string[];
  /** The vectors of the large index's documents `doc0`…, by id. */
  vectors: ReadonlyMap<string, Float32Array>;
  /** Documents per index. */
  size: number;
  /** Queries per set of the old corpus's figures. */
  queries: number;
  /** Queries per case of the synonyms' figure, and the rounds of them. */
  synonymQueries: number;
  synonymRounds: number;
}

/** Loads the side indexes, waits until the server settles, and prints the figures. */
export async function measureSideIndexes(server: ServerProcess, options: SideIndexOptions): Promise<void> {
  const { words, size, vectors } = options;
  const workload = synonymWorkload(words, { entries: 1_000, queries: options.synonymQueries, dims: PAIR_DIMS });
  const oldDocs = (start: number, count: number) =>
    benchDocs("doc", start, count).map((doc) => ({
      ...doc,
      // Rounded as a client's JSON would carry it.
      vector: Array.from(vectors.get(doc.id)!, (x) => Math.round(x * 1e6) / 1e6),
    }));
  const pairDocs = (start: number, count: number) =>
    wordDocs(words, "doc", start, count).map((doc, i) => ({
      ...doc,
      vector: vectorOf("near-random", start + i, PAIR_DIMS),
    }));
  const took = await timed(async () => {
    await load(server, "old", undefined, size, oldDocs);
    for (const indexName of ["plain", "synonyms"]) await load(server, indexName, PAIR_MODEL, size, pairDocs);
    await ok(server, { action: "updateSettings", indexName: "synonyms", settings: { synonyms: workload.synonyms } });
  });
  line(
    "side indexes",
    `old corpus and synonym pair, 3 × ${size} docs without embedding, loaded in ${(took / 1000).toFixed(0)} s, ` +
      `settled in ${(await settle(server)).toFixed(0)} s`,
  );

  const old = { "2-4 words": benchQueries(options.queries) };
  line("3. hybrid (old)", `generated vocabulary, ${await modeLatencies(server, "old", "hybrid", old)}`);
  line("3. fulltext (old)", `generated vocabulary, ${await modeLatencies(server, "old", "fulltext", old)}`);
  line("14. fulltext (old)", `generated vocabulary, ${await fulltextVariants(server, "old", old["2-4 words"])}`);

  const rounds = options.synonymRounds;
  const costs = await measureSynonymCost(server, workload, { without: "plain", with: "synonyms", rounds });
  const ratio = (i: number) => costs[i]!.with / costs[i]!.without;
  const pairs: string[] = [];
  for (let i = 0; i < costs.length; i += 2) {
    pairs.push(`${costs[i]!.name} ${ratio(i).toFixed(2)}× (expanded ${ratio(i + 1).toFixed(2)}×)`);
  }
  const worst = Math.max(...costs.map((_, i) => ratio(i)));
  line(
    "synonyms",
    `${workload.synonyms.length} entries against none, ${size} docs, tookMs p50 in pairs, ${rounds} rounds of ` +
      `${options.synonymQueries} queries: ${pairs.join(", ")}; worst ${worst.toFixed(2)}× (target ≤ 1.2×)`,
  );
}

/** Creates `indexName` (with `modelId`, the default model when absent) and loads its first `size` documents. */
async function load(
  server: ServerProcess,
  indexName: string,
  modelId: string | undefined,
  size: number,
  docsFrom: (start: number, count: number) => (BenchDoc & { vector: number[] })[],
): Promise<void> {
  await ok(server, { action: "createIndex", indexName, docs: [], ...(modelId === undefined ? {} : { modelId }) });
  let next = 0;
  const send = async () => {
    while (next < size) {
      const start = next;
      next += BATCH;
      await ok(server, { action: "addDocs", indexName, docs: docsFrom(start, Math.min(BATCH, size - start)) });
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, send));
}
