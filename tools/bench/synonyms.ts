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
import { dictionaryWords, quantile } from "./_corpus.ts";
import {
  clientVectorEnvironment,
  loadDictionaryIndex,
  settle,
  startClientVectorServer,
  vectorOf,
} from "./_client_vectors.ts";
import { mulberry32 } from "../../src/util/seeded_random.ts";

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
const QUERIES = Number(values.queries);
const ROUNDS = Number(values.rounds);
const ENTRIES = Number(values.synonyms);
const words = await dictionaryWords(values.dict);
const next = mulberry32(11);
const pick = () => words[Math.floor(next() * words.length)]!;

const groups = Array.from({ length: ENTRIES / 2 }, () => ({ words: [pick(), pick()] }));
const oneWay = Array.from({ length: ENTRIES / 2 }, () => ({ from: pick(), to: [pick(), `${pick()} ${pick()}`] }));
const synonyms = [...groups, ...oneWay];
const sources = [...groups.flatMap((group) => group.words), ...oneWay.map((entry) => entry.from)];

type Answer = { tookMs: number };
type Search = Record<string, unknown>;

const server = await startClientVectorServer(Deno.cwd(), await clientVectorEnvironment());
try {
  const started = performance.now();
  // The same documents in both: the seed, not the name, decides the texts.
  await loadDictionaryIndex(server, "plain", DOCS, words, 1);
  await loadDictionaryIndex(server, "synonyms", DOCS, words, 1);
  await ok(server, { action: "updateSettings", indexName: "synonyms", settings: { synonyms } });
  line(
    "bench:synonyms",
    `2 × ${DOCS} docs of ${values.dict} loaded in ${((performance.now() - started) / 1000).toFixed(0)} s; ` +
      `${synonyms.length} synonym entries, ${ROUNDS} rounds of ${QUERIES} queries`,
  );
  await settle(server);
  const tookMs = async (search: Search, indexName: string) =>
    (await ok<Answer>(server, { action: "search", ...search, indexName })).tookMs;
  /** The `tookMs` of each search on the index without settings and on the one with synonyms, in turns. */
  const paired = async (searches: Search[], without: number[], withSynonyms: number[]) => {
    for (const [i, search] of searches.entries()) {
      if (i % 2 === 0) {
        without.push(await tookMs(search, "plain"));
        withSynonyms.push(await tookMs(search, "synonyms"));
      } else {
        withSynonyms.push(await tookMs(search, "synonyms"));
        without.push(await tookMs(search, "plain"));
      }
    }
  };
  const cases: { name: string; searches: Search[] }[] = [];
  for (const count of [2, 5, 12]) {
    const queries = Array.from({ length: QUERIES }, () => Array.from({ length: count }, pick).join(" "));
    const expanded = queries.map((query) =>
      [sources[Math.floor(next() * sources.length)], ...query.split(" ").slice(1)].join(" ")
    );
    cases.push({ name: `fulltext ${count} words`, searches: queries.map((query) => ({ mode: "fulltext", query })) });
    cases.push({ name: `  each with a synonym`, searches: expanded.map((query) => ({ mode: "fulltext", query })) });
    if (count === 5) {
      const exact = { mode: "fulltext", typoTolerance: false, prefix: false };
      cases.push({ name: "fulltext exact 5 words", searches: queries.map((query) => ({ ...exact, query })) });
      cases.push({ name: "  each with a synonym", searches: expanded.map((query) => ({ ...exact, query })) });
      const hybrid = (query: string, i: number) => ({
        mode: "hybrid",
        query,
        vector: vectorOf("near-random", 7e6 + i),
      });
      cases.push({ name: "hybrid 5 words", searches: queries.map(hybrid) });
      cases.push({ name: "  each with a synonym", searches: expanded.map(hybrid) });
    }
  }
  // Warm-up: compiles the settings once, and the server's code paths.
  for (const { searches } of cases) await paired(searches.slice(0, 20), [], []);
  const without = cases.map(() => [] as number[]);
  const withSynonyms = cases.map(() => [] as number[]);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, { searches }] of cases.entries()) await paired(searches, without[i]!, withSynonyms[i]!);
  }
  for (const [i, { name }] of cases.entries()) {
    const before = quantile(without[i]!, 0.5);
    const after = quantile(withSynonyms[i]!, 0.5);
    line(
      `  ${name}`,
      `tookMs p50 ${before.toFixed(3)} ms without, ${after.toFixed(3)} ms with ${synonyms.length} synonyms ` +
        `(${(after / before).toFixed(2)}×)`,
    );
  }
} finally {
  await server.stop();
}
