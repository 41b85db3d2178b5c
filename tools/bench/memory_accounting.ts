/**
 * `deno task bench:memory`: what an index costs the process against what `getIndex` reports as its `memoryBytes`.
 * It loads indexes of client vectors (near-random, 384-d) and texts of 12 words of Debian's `wamerican` list (the
 * generated vocabulary where that is not installed) with sequential `addDocs` of 1,000 documents, restarts the server,
 * and then searches each index in turn, so that each loads alone into a process that has only the ones before it:
 * the RSS each load adds is what that index costs.
 *
 *   deno task bench:memory                      # indexes of 1,000, 15,000 and 100,000 documents
 *   deno task bench:memory --docs 15000,15000   # any sizes, loaded in that order
 */
import { parseArgs } from "node:util";
import { metricIn, metricsText, type ServerProcess } from "../../tests/_server_process.ts";
import { line, ok, rssMiB } from "./_bench_helpers.ts";
import { dictionaryWords } from "./_corpus.ts";
import {
  clientVectorEnvironment,
  loadDictionaryIndex,
  settle,
  startClientVectorServer,
  vectorOf,
} from "./_client_vectors.ts";

const { values } = parseArgs({ args: Deno.args, options: { docs: { type: "string", default: "1000,15000,100000" } } });
const SIZES = values.docs.split(",").map(Number);
/** How long the server is left alone before its RSS is read, so that what a load freed has been collected. */
const QUIET_MS = 3_000;
/** What the accounting target allows besides the reported bytes: a load's own buffers and the runtime's steps. */
const SLACK_MIB = 10;

/** The server's memory in MiB, from its metrics, once it has been left alone for {@link QUIET_MS}. */
async function quietMemory(
  server: ServerProcess,
): Promise<{ rss: number; heap: number; used: number; external: number }> {
  await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
  const text = await metricsText(server);
  const mib = (name: string) => metricIn(text, name) / 1024 / 1024;
  return {
    rss: await rssMiB(server.pid),
    heap: mib('quire_heap_bytes{kind="total"}'),
    used: mib('quire_heap_bytes{kind="used"}'),
    external: mib("quire_external_memory_bytes"),
  };
}

/** What grew between two readings: the RSS, the heap, its use, and the memory outside it. */
function grown(before: Awaited<ReturnType<typeof quietMemory>>, after: typeof before): string {
  const sign = (mib: number) => `${mib < 0 ? "" : "+"}${mib.toFixed(0)}`;
  return `heap ${sign(after.heap - before.heap)} (used ${sign(after.used - before.used)}), external ` +
    `${sign(after.external - before.external)}, the rest ${
      sign(after.rss - after.heap - after.external - (before.rss - before.heap - before.external))
    } MiB`;
}

const words = await dictionaryWords();
const env = await clientVectorEnvironment();
const root = new URL("../..", import.meta.url).pathname;
const names = SIZES.map((docs, i) => `memory-${i}-${docs}`);
let key: string;
{
  await using server = await startClientVectorServer(root, env);
  key = server.key;
  for (const [i, name] of names.entries()) await loadDictionaryIndex(server, name, SIZES[i]!, words);
  // Every index's snapshot is written, so that each load after the restart reads one, as a restart would.
  await settle(server);
}
await using server = await startClientVectorServer(root, env, key);
await ok(server, { action: "listIndexes" });
let before = await quietMemory(server);
line(
  "memory idle",
  `RSS ${before.rss.toFixed(0)} MiB after a restart, no index loaded: heap ${before.heap.toFixed(0)} ` +
    `(used ${before.used.toFixed(0)}), external ${before.external.toFixed(0)} MiB`,
);
let reportedTotal = 0;
for (const [i, name] of names.entries()) {
  const query = Array.from({ length: 5 }, (_, w) => words[(i * 7919 + w * 104729) % words.length]).join(" ");
  await ok(server, { action: "search", indexName: name, query, vector: vectorOf("near-random", 1e9 + i) });
  const index = await ok<{ memoryBytes?: number }>(server, { action: "getIndex", indexName: name });
  const reported = (index.memoryBytes ?? 0) / 1024 / 1024;
  reportedTotal += reported;
  const after = await quietMemory(server);
  const growth = after.rss - before.rss;
  line(
    `memory ${SIZES[i]} docs`,
    `RSS +${growth.toFixed(0)} MiB (to ${after.rss.toFixed(0)}), memoryBytes ${reported.toFixed(1)} MiB: ` +
      `${(growth / reported).toFixed(2)}× of it; ${(growth / (reported + SLACK_MIB)).toFixed(2)}× of it + ` +
      `${SLACK_MIB} MiB (target ≤ 1.25×); ${(growth * 1024 * 1024 / SIZES[i]!).toFixed(0)} bytes a document`,
  );
  line("", grown(before, after));
  before = after;
}
line("memory in all", `memoryBytes ${reportedTotal.toFixed(0)} MiB of ${SIZES.length} indexes`);
