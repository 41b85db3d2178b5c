/**
 * `deno task bench:synonyms`: what an index's synonyms cost a search. A server process holds two indexes of the same
 * 100,000 documents of 12 words drawn from Debian's `wamerican` (with near-random 384-d client vectors, loaded in
 * batches of 1,000): one without settings, and one with 1,000 synonym entries (500 groups of two words, 500 one-way
 * entries to a word and a two-word phrase). One client sends each search to both, one right after the other (which goes
 * first alternates), so that drift and background work hit both alike; the server's `tookMs` p50 of each, and their
 * ratio. The queries are random words (of which about 3% have a synonym), and again with their first word replaced by
 * one that has a synonym, so that every query is expanded: full-text with typos and prefixes (the default), exact, and
 * hybrid.
 *
 *   deno task bench:synonyms                       # 100,000 documents of wamerican
 *   deno task bench:synonyms --docs 30000 --dict /usr/share/dict/ngerman
 */
import { parseArgs } from "node:util";
import { line, ok } from "./_bench_helpers.ts";
import { dictionaryWords } from "./_corpus.ts";
import {
  clientVectorEnvironment,
  DIMS,
  loadDictionaryIndex,
  settle,
  startClientVectorServer,
} from "./_client_vectors.ts";
import { measureSynonymCost, synonymWorkload } from "./_synonym_searches.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    docs: { type: "string", default: "100000" },
    dict: { type: "string", default: "/usr/share/dict/words" },
    queries: { type: "string", default: "300" },
    rounds: { type: "string", default: "3" },
    synonyms: { type: "string", default: "1000" },
  },
});
const DOCS = Number(values.docs);
const ROUNDS = Number(values.rounds);
const words = await dictionaryWords(values.dict);
const workload = synonymWorkload(words, {
  entries: Number(values.synonyms),
  queries: Number(values.queries),
  dims: DIMS,
});

const server = await startClientVectorServer(Deno.cwd(), await clientVectorEnvironment());
try {
  const started = performance.now();
  // The same documents in both: the seed, not the name, decides the texts.
  await loadDictionaryIndex(server, "plain", DOCS, words, 1);
  await loadDictionaryIndex(server, "synonyms", DOCS, words, 1);
  await ok(server, { action: "updateSettings", indexName: "synonyms", settings: { synonyms: workload.synonyms } });
  line(
    "bench:synonyms",
    `2 × ${DOCS} docs of ${values.dict} loaded in ${((performance.now() - started) / 1000).toFixed(0)} s; ` +
      `${workload.synonyms.length} synonym entries, ${ROUNDS} rounds of ${values.queries} queries`,
  );
  await settle(server);
  const costs = await measureSynonymCost(server, workload, { without: "plain", with: "synonyms", rounds: ROUNDS });
  for (const { name, without, with: after } of costs) {
    line(
      `  ${name}`,
      `tookMs p50 ${without.toFixed(3)} ms without, ${after.toFixed(3)} ms with ${workload.synonyms.length} synonyms ` +
        `(${(after / without).toFixed(2)}×)`,
    );
  }
} finally {
  await server.stop();
}
