/**
 * `deno task bench:fulltext`: the full-text index alone, in this process, on a real vocabulary: the heap it holds
 * (after full collections) against its estimate, and the time a query takes to match and score, exact and with typos
 * and prefixes, for queries of 2, 5 and 12 words, and with their last word misspelled. Texts are 12 words drawn uniformly from Debian's `wamerican` list
 * (`--dict /usr/share/dict/ngerman` for `wngerman`, with `--language german`).
 *
 *   deno task bench:fulltext                      # 15,000 and 100,000 documents
 *   deno task bench:fulltext --docs 30000 --dict /usr/share/dict/ngerman --language german
 */
import { parseArgs } from "node:util";
import { TextIndex } from "../../src/search/text_index.ts";
import { TYPOS_BELOW_MATCHES } from "../../src/search/text_query.ts";
import { analyzerFor } from "../../src/fulltext/analyzer.ts";
import { mulberry32 } from "../../src/util/seeded_random.ts";
import { line } from "./_bench_helpers.ts";
import { dictionaryWords, ms, quantile } from "./_corpus.ts";

/** Milliseconds with three decimals: an exact match takes hundredths. */
const fine = (value: number) => `${value.toFixed(3)} ms`;

const { values } = parseArgs({
  args: Deno.args,
  options: {
    docs: { type: "string", default: "15000,100000" },
    dict: { type: "string", default: "/usr/share/dict/words" },
    language: { type: "string", default: "english" },
  },
});
const WORDS_PER_TEXT = 12;
const QUERIES = 200;
const MIB = 1024 * 1024;

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("Run with --v8-flags=--expose-gc (deno task bench:fulltext does)");

/** V8's heap in use after two full collections. */
function heapUsed(): number {
  gc!();
  gc!();
  return Deno.memoryUsage().heapUsed;
}

const words = await dictionaryWords(values.dict);
const analyzer = analyzerFor(values.language);
for (const docs of values.docs.split(",").map(Number)) {
  const next = mulberry32(docs);
  const text = (count: number) =>
    Array.from({ length: count }, () => words[Math.floor(next() * words.length)]).join(" ");
  const texts = Array.from({ length: docs }, () => text(WORDS_PER_TEXT));
  // The analyzer's memo of stems is the process's, not the index's: filled before the baseline.
  for (const body of texts) analyzer.terms(body);
  const before = heapUsed();
  const started = performance.now();
  const index = new TextIndex(analyzer);
  texts.forEach((body, slot) => index.add(slot, body));
  const built = performance.now() - started;
  const heap = heapUsed() - before;
  line(
    `fulltext ${docs} docs`,
    `${index.terms().length} terms, ${index.variantWords().length} inflected words; heap ${
      (heap / MIB).toFixed(1)
    } MiB, ` +
      `estimate ${(index.bytes / MIB).toFixed(1)} MiB; built in ${ms(built)}`,
  );
  for (const count of [2, 5, 12]) {
    const queries = Array.from({ length: QUERIES }, () => text(count));
    // The same queries with their last word misspelled (a letter replaced), as people type them.
    const misspelled = queries.map((query) =>
      query.replace(/(\p{L})(\p{L})$/u, (_, a) => `${a}${a === "e" ? "a" : "e"}`)
    );
    const p50 = (typoTolerance: boolean, asked = queries) => {
      const times = asked.map((query) => {
        const start = performance.now();
        const matched = index.query(query, { typoTolerance, prefix: typoTolerance, enough: TYPOS_BELOW_MATCHES });
        index.withScores(matched, undefined, (found) => found.slots.length);
        return performance.now() - start;
      });
      return quantile(times, 0.5);
    };
    // A first pass of each warms the compiler; the second is the one reported.
    p50(false);
    p50(true);
    const exact = p50(false);
    const typos = p50(true);
    const typoed = p50(true, misspelled);
    line(
      `  ${count} words`,
      `exact p50 ${fine(exact)}, typos + prefix p50 ${fine(typos)} (${(typos / exact).toFixed(1)}×), ` +
        `last word misspelled ${fine(typoed)} (${(typoed / exact).toFixed(1)}×)`,
    );
  }
}
