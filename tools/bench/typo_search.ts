/**
 * `deno task bench:typos`: what typo tolerance and prefixes cost a search, as a new user meets them. A server process
 * holds 100,000 documents of 12 words drawn from Debian's `wamerican` (or `--dict /usr/share/dict/ngerman`) with
 * near-random 384-d client vectors, loaded in sequential batches of 1,000. One client sends full-text searches of 2, 5
 * and 12 words drawn from the same list, exact (`typoTolerance: false, prefix: false`) and by default (typos and
 * prefix), and the same queries with one word misspelled; the server's `tookMs` p50 of each, and their ratios. Then 8
 * clients send hybrid searches of 5 words (and vector ones), p50.
 *
 *   deno task bench:typos                       # 100,000 documents of wamerican
 *   deno task bench:typos --docs 30000 --dict /usr/share/dict/ngerman
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
  },
});
const DOCS = Number(values.docs);
const QUERIES = Number(values.queries);
const words = await dictionaryWords(values.dict);
const next = mulberry32(7);
const pick = () => words[Math.floor(next() * words.length)]!;

/** A word with one letter replaced, of 5 letters or more, so that typo tolerance applies to it. */
function misspelled(): string {
  for (;;) {
    const word = pick();
    if (word.length < 5) continue;
    const at = 1 + Math.floor(next() * (word.length - 2));
    const letter = word[at] === "e" ? "a" : "e";
    return word.slice(0, at) + letter + word.slice(at + 1);
  }
}

const server = await startClientVectorServer(Deno.cwd(), await clientVectorEnvironment());
try {
  const started = performance.now();
  await loadDictionaryIndex(server, "typos", DOCS, words);
  line(
    "bench:typos",
    `${DOCS} docs of ${values.dict} loaded in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  await settle(server);
  type Answer = { tookMs: number };
  const tookP50 = async (queries: string[], match: { typoTolerance: boolean; prefix: boolean }) => {
    const took: number[] = [];
    for (const query of queries) {
      const body = { action: "search", indexName: "typos", query, mode: "fulltext", ...match };
      took.push((await ok<Answer>(server, body)).tookMs);
    }
    return quantile(took, 0.5);
  };
  const exact = { typoTolerance: false, prefix: false };
  const fuzzy = { typoTolerance: true, prefix: true };
  for (const count of [2, 5, 12]) {
    const queries = Array.from({ length: QUERIES }, () => Array.from({ length: count }, pick).join(" "));
    const typoed = queries.map((query) => [...query.split(" ").slice(1), misspelled()].join(" "));
    await tookP50(queries.slice(0, 20), fuzzy); // warm-up
    const [plain, typos, withTypo] = [
      await tookP50(queries, exact),
      await tookP50(queries, fuzzy),
      await tookP50(typoed, fuzzy),
    ];
    line(
      `  ${count} words`,
      `exact ${plain.toFixed(2)} ms, default ${typos.toFixed(2)} ms (${(typos / plain).toFixed(2)}×), ` +
        `one word misspelled ${withTypo.toFixed(2)} ms (${(withTypo / plain).toFixed(2)}×)`,
    );
  }
  for (const mode of ["vector", "hybrid"] as const) {
    const took: number[] = [];
    let sent = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (sent < QUERIES * 2) {
        const i = sent++;
        const query = Array.from({ length: 5 }, pick).join(" ");
        const body = {
          action: "search",
          indexName: "typos",
          mode,
          query,
          vector: vectorOf("near-random", 5_000_000 + i),
        };
        took.push((await ok<Answer>(server, body)).tookMs);
      }
    }));
    line(`  ${mode}, 8 clients`, `5-word queries, tookMs p50 ${quantile(took, 0.5).toFixed(2)} ms`);
  }
} finally {
  await server.stop();
}
