/**
 * The memory budget bounds the process, not only its own count: a real server with `SEARCH_CACHE_MB` at about one
 * index, searching many indexes in turn, stays within its idle RSS plus 1.25 times the budget plus 64 MiB, answers
 * every search right, and counts its evictions. Without the budget the same searches take more than that, so the
 * test fails if evicted memory is not given back.
 */
import assert from "node:assert/strict";
import {
  metricIn,
  metricsText,
  ok,
  serverEnvironment,
  type ServerProcess,
  startServerProcess,
  waitUntilReady,
} from "../_server_process.ts";
import { testModels } from "../_helpers.ts";
import { unitVector } from "../_vectors.ts";
import { peakRssDuring, serverRssMiB } from "../_process_memory.ts";

const INDEXES = 12;
const DOCS = 2_000;
const DIMS = 384;
const ROUNDS = 2;
const MIB = 1024 * 1024;
/** What the budget counts of an index, against its `memoryBytes` (as `MemoryBudget` does). */
const RESIDENT_PER_ESTIMATED_BYTE = 1.35;

const vectorOf = (index: number, doc: number) => unitVector(index * DOCS + doc, DIMS, false);

async function environment(): Promise<Record<string, string>> {
  const env = await serverEnvironment();
  const models = { ...await testModels(), "client-384": { version: "1", dimensions: DIMS } };
  await Deno.writeTextFile(env.MODELS_FILE!, JSON.stringify(models));
  return env;
}

/** Searches every index in turn, `ROUNDS` times, by a document's vector and by its own word; checks each top hit. */
async function searchInTurn(server: ServerProcess): Promise<void> {
  for (let round = 0; round < ROUNDS; round++) {
    for (let index = 0; index < INDEXES; index++) {
      const doc = (round * 613 + index * 97) % DOCS;
      const byVector = await ok<{ hits: { id: string }[] }>(server, {
        action: "search",
        indexName: `ix${index}`,
        mode: "vector",
        vector: vectorOf(index, doc),
        limit: 3,
      });
      assert.equal(byVector.hits[0]?.id, `d${doc}`, `ix${index}, vector of d${doc}`);
      const byWord = await ok<{ hits: { id: string }[] }>(server, {
        action: "search",
        indexName: `ix${index}`,
        mode: "fulltext",
        query: `tag${index}x${doc}`,
      });
      assert.equal(byWord.hits[0]?.id, `d${doc}`, `ix${index}, word of d${doc}`);
    }
  }
}

Deno.test("with SEARCH_CACHE_MB at about one index, many indexes searched in turn stay within the budget's RSS", async () => {
  const env = await environment();
  let key: string;
  let largest = 0;
  {
    await using server = await startServerProcess(env);
    key = server.key;
    for (let index = 0; index < INDEXES; index++) {
      await ok(server, { action: "createIndex", indexName: `ix${index}`, modelId: "client-384", docs: [] });
      for (let from = 0; from < DOCS; from += 1_000) {
        const docs = Array.from({ length: 1_000 }, (_, i) => ({
          id: `d${from + i}`,
          text: `shared words of a text number ${from + i} tag${index}x${from + i}`,
          vector: vectorOf(index, from + i),
        }));
        await ok(server, { action: "addDocs", indexName: `ix${index}`, docs });
      }
      // getIndex shows memoryBytes while this instance holds the index, which a search makes sure of.
      await ok(server, { action: "search", indexName: `ix${index}`, mode: "fulltext", query: "words" });
      const view = await ok<{ memoryBytes?: number }>(server, { action: "getIndex", indexName: `ix${index}` });
      largest = Math.max(largest, view.memoryBytes ?? 0);
    }
  }
  assert.ok(largest > 0, "getIndex reports memoryBytes");
  // Room for the largest index and a fifth more: never for two.
  const budgetMiB = Math.ceil(largest * RESIDENT_PER_ESTIMATED_BYTE * 1.2 / MIB);
  assert.ok(2 * largest * RESIDENT_PER_ESTIMATED_BYTE > budgetMiB * MIB);

  const runs: Record<string, { idle: number; peak: number }> = {};
  for (const [run, budget] of [["budget", budgetMiB], ["none", undefined]] as const) {
    const settings: Record<string, string> = budget === undefined ? {} : { SEARCH_CACHE_MB: String(budget) };
    await using server = await startServerProcess({ ...env, ...settings }, key);
    await waitUntilReady(server);
    await ok(server, { action: "listIndexes" });
    const idle = await serverRssMiB(server);
    const [peak] = await peakRssDuring(() => serverRssMiB(server), () => searchInTurn(server));
    runs[run] = { idle, peak };
    if (run === "budget") {
      assert.ok(
        metricIn(await metricsText(server), "quire_search_cache_evictions_total") >= INDEXES * ROUNDS - 1,
        "evictions",
      );
      assert.ok(metricIn(await metricsText(server), "quire_search_cache_bytes") <= budget! * MIB);
    }
  }
  const { budget, none } = runs as Record<string, { idle: number; peak: number }>;
  const allowed = budget!.idle + 1.25 * budgetMiB + 64;
  assert.ok(
    budget!.peak <= allowed,
    `peak RSS ${budget!.peak.toFixed(0)} MiB with a budget of ${budgetMiB} MiB, idle ${budget!.idle.toFixed(0)}: ` +
      `more than ${allowed.toFixed(0)}`,
  );
  // The test can fail: without the budget the same searches hold every index, and pass the same bound.
  assert.ok(
    none!.peak > none!.idle + 1.25 * budgetMiB + 64,
    `without a budget: idle ${none!.idle.toFixed(0)}, peak ${none!.peak.toFixed(0)} MiB`,
  );
});
