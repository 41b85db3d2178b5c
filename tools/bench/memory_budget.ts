/**
 * `deno task bench:budget`: whether `SEARCH_CACHE_MB` bounds the process. It loads indexes of client vectors
 * (near-random, 384-d) and texts of 12 `wamerican` words, restarts the server with a budget of about the largest
 * index, and searches the indexes round-robin, each search by one document's vector and by its text, whose top hit
 * must be that document. It reports the peak RSS against the idle RSS (default model loaded) plus 1.25 times the
 * budget plus 64 MiB, and the evictions. Then the Deploy shape (`start:deploy`: wasm, the default budget) serves the
 * largest index alone, and its peak RSS is read the same way.
 *
 *   deno task bench:budget                                 # three indexes of 15,000 and three of 50,000, 3 rounds
 *   deno task bench:budget --docs 2000,2000 --rounds 2
 */
import { parseArgs } from "node:util";
import { deployModeFlags } from "../../start_deploy.ts";
import {
  metricIn,
  metricsText,
  type ServerProcess,
  startServerProcess,
  waitUntilReady,
} from "../../tests/_server_process.ts";
import { peakRssDuring, rssMiB } from "../../tests/_process_memory.ts";
import { line, ok } from "./_bench_helpers.ts";
import { dictionaryWords } from "./_corpus.ts";
import {
  clientVectorEnvironment,
  dictionaryText,
  loadDictionaryIndex,
  settle,
  startClientVectorServer,
  vectorOf,
} from "./_client_vectors.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    docs: { type: "string", default: "15000,15000,15000,50000,50000,50000" },
    rounds: { type: "string", default: "3" },
  },
});
const SIZES = values.docs.split(",").map(Number);
const ROUNDS = Number(values.rounds);
const MIB = 1024 * 1024;
/** What the budget counts of an index against its `memoryBytes` (as `MemoryBudget` does). */
const RESIDENT_PER_ESTIMATED_BYTE = 1.35;
const MAIN = new URL("../../main.ts", import.meta.url).pathname;

/**
 * Searches the indexes at `positions` (of {@link SIZES}) in turn, `rounds` times, by one document's vector and by its
 * text; returns how many top hits were not that document.
 */
async function searchInTurn(server: ServerProcess, positions: number[], rounds: number): Promise<number> {
  let wrong = 0;
  for (let round = 0; round < rounds; round++) {
    for (const i of positions) {
      const name = names[i]!;
      const doc = (round * 7_919 + i * 104_729) % SIZES[i]!;
      const byVector = await ok<{ hits: { id: string }[] }>(server, {
        action: "search",
        indexName: name,
        mode: "vector",
        vector: vectorOf("near-random", doc),
        limit: 3,
      });
      const byText = await ok<{ hits: { id: string }[] }>(server, {
        action: "search",
        indexName: name,
        mode: "fulltext",
        query: dictionaryText(words, seeds[i]!, doc),
        limit: 3,
      });
      if (byVector.hits[0]?.id !== `d${doc}`) wrong++;
      if (byText.hits[0]?.id !== `d${doc}`) wrong++;
    }
  }
  return wrong;
}

const words = await dictionaryWords();
const env = await clientVectorEnvironment();
const root = new URL("../..", import.meta.url).pathname;
const names = SIZES.map((docs, i) => `budget-${i}-${docs}`);
const seeds = SIZES.map((_, i) => 1 + i);
let key: string;
let largest = 0;
let largestName = names[0]!;
{
  await using server = await startClientVectorServer(root, env);
  key = server.key;
  for (const [i, name] of names.entries()) {
    await loadDictionaryIndex(server, name, SIZES[i]!, words, seeds[i]);
    await ok(server, { action: "search", indexName: name, mode: "fulltext", query: words[0] });
    const view = await ok<{ memoryBytes?: number }>(server, { action: "getIndex", indexName: name });
    if ((view.memoryBytes ?? 0) > largest) [largest, largestName] = [view.memoryBytes ?? 0, name];
  }
  // Every index's snapshot is written, so that each load reads one, as after a restart.
  await settle(server);
}
// Room for the largest index and a tenth more: never for two of the largest.
const budget = Math.ceil(largest * RESIDENT_PER_ESTIMATED_BYTE * 1.1 / MIB);
{
  await using server = await startServerProcess({ ...env, SEARCH_CACHE_MB: String(budget) }, key);
  await waitUntilReady(server);
  await ok(server, { action: "listIndexes" });
  const idle = await rssMiB(server.pid);
  const started = performance.now();
  const [peak, wrong] = await peakRssDuring(
    () => rssMiB(server.pid),
    () => searchInTurn(server, [...names.keys()], ROUNDS),
  );
  const seconds = (performance.now() - started) / 1000;
  const evictions = metricIn(await metricsText(server), "quire_search_cache_evictions_total");
  const allowed = idle + 1.25 * budget + 64;
  line(
    "2. budget",
    `${SIZES.join(", ")} docs, SEARCH_CACHE_MB=${budget} (largest index ${(largest / MIB).toFixed(1)} MiB): ` +
      `idle ${idle.toFixed(0)} MiB, peak ${peak.toFixed(0)} MiB (target ≤ ${
        allowed.toFixed(0)
      }: idle + 1.25 × budget ` +
      `+ 64); ${evictions} evictions in ${ROUNDS * names.length * 2} searches (${seconds.toFixed(1)} s); ` +
      `${wrong} wrong top hits`,
  );
}
{
  const deployEnv = { ...env, EMBEDDING_BACKEND: "wasm" };
  const args = ["run", ...deployModeFlags(env.DENO_KV_PATH), MAIN];
  await using server = await startServerProcess(deployEnv, key, { args });
  await waitUntilReady(server);
  const idle = await rssMiB(server.pid);
  const index = names.indexOf(largestName);
  const [peak, wrong] = await peakRssDuring(() => rssMiB(server.pid), () => searchInTurn(server, [index], ROUNDS * 3));
  const budgetBytes = metricIn(await metricsText(server), "quire_search_cache_budget_bytes");
  line(
    "2. deploy shape",
    `start:deploy (wasm, budget ${(budgetBytes / MIB).toFixed(0)} MiB) serving the ${SIZES[index]}-document index: ` +
      `idle ${idle.toFixed(0)} MiB, peak ${peak.toFixed(0)} MiB (target < 450); ${wrong} wrong top hits`,
  );
}
