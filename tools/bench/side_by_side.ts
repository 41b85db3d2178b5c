/**
 * `deno task bench:side-by-side --before <dir>`: two checkouts compared in one run, fairly. Both servers (`main.ts` of
 * the checkout at `--before`, e.g. a git worktree of an earlier commit, and this one) are loaded with the same
 * documents as `bench:growth` (the benchmark's texts with near-random 384-d client vectors, 100,000 unless `--docs`
 * says otherwise) and stay up together; then, in `--rounds` rounds, each takes the p50 of vector, fulltext and hybrid
 * searches at 8 clients (after as many to warm up), the first server first in even rounds and last in odd ones. So the
 * drift of this machine over minutes, which moved one-shot comparisons (`bench:growth --before`) by 10%, falls on both
 * sides alike. Prints every round, then each side's median per mode and their ratio.
 */
import { parseArgs } from "node:util";
import type { ServerProcess } from "../../tests/_server_process.ts";
import { line, rssMiB } from "./_bench_helpers.ts";
import { ms, quantile } from "./_corpus.ts";
import { loadClientVectors, type SearchMode, searchP50, settle, startClientVectorServer } from "./_client_vectors.ts";

const args = parseArgs({
  args: Deno.args,
  options: {
    before: { type: "string" },
    docs: { type: "string", default: "100000" },
    rounds: { type: "string", default: "6" },
  },
});
if (args.values.before === undefined) throw new Error("Pass --before <dir>: the checkout to compare this one with");
const DOCS = Number(args.values.docs);
const ROUNDS = Number(args.values.rounds);
const MODES: SearchMode[] = ["vector", "fulltext", "hybrid"];

const sides: { name: string; root: string; server?: ServerProcess; p50s: Record<SearchMode, number[]> }[] = [
  { name: "before", root: args.values.before, p50s: { vector: [], fulltext: [], hybrid: [] } },
  { name: "after", root: new URL("../..", import.meta.url).pathname, p50s: { vector: [], fulltext: [], hybrid: [] } },
];
try {
  for (const side of sides) {
    side.server = await startClientVectorServer(side.root);
    await loadClientVectors(side.server, "near-random", DOCS, { prose: true });
    await settle(side.server);
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      const p50s: string[] = [];
      for (const mode of MODES) {
        await searchP50(side.server!, "near-random", mode);
        const p50 = await searchP50(side.server!, "near-random", mode);
        side.p50s[mode].push(p50);
        p50s.push(`${mode} ${ms(p50)}`);
      }
      line(`round ${round + 1} ${side.name}`, `p50 at 8 clients: ${p50s.join(", ")}`);
    }
  }
  const median = (side: typeof sides[number], mode: SearchMode) => quantile(side.p50s[mode], 0.5);
  for (const side of sides) {
    const medians = MODES.map((mode) => `${mode} ${ms(median(side, mode))}`).join(", ");
    line(`${side.name} ${DOCS} docs`, `median p50: ${medians}; RSS ${Math.round(await rssMiB(side.server!.pid))} MiB`);
  }
  const [before, after] = sides as [typeof sides[number], typeof sides[number]];
  line(
    `${DOCS} docs`,
    MODES.map((mode) => `${mode} ${(median(before, mode) / median(after, mode)).toFixed(2)}× faster`).join(", "),
  );
} finally {
  for (const side of sides) await side.server?.[Symbol.asyncDispose]();
}
