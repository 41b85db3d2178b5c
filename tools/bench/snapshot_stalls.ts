/**
 * `deno task bench:snapshot`: what writing a snapshot of a 100k-doc index does to the requests around it. In one
 * process (the server's own parts: the search index, the snapshot encoder and Deno KV), 8 clients search while 10-doc
 * writes land every 20 ms (their vectors join the graph in the background, as in the server), and a snapshot is
 * encoded and stored to a KV file as it is encoded: once without slices (the encoder runs on until each MiB is handed
 * to the store), once in slices of 10 ms. It prints the longest event-loop stall and the search p50/p99 during each,
 * beside the same with no snapshot.
 */
import { parseArgs } from "node:util";
import { loadAnnGraphs } from "../../src/search/ann_graphs.ts";
import { SearchIndex } from "../../src/search/search_index.ts";
import { encodeSearchSnapshot } from "../../src/search/search_snapshot_codec.ts";
import { writeSnapshot } from "../../src/storage/snapshot_store.ts";
import type { DocChange } from "../../src/storage/doc_change_codec.ts";
import { nextTurn, TimeSlices } from "../../src/util/time_slices.ts";
import { BackgroundTasks } from "../../src/concurrency/background_tasks.ts";
import { GraphInserts } from "../../src/index_state/graph_inserts.ts";
import { benchDocs, ms, quantile } from "./_corpus.ts";
import { unitVector } from "../../tests/_vectors.ts";

const args = parseArgs({ args: Deno.args, options: { docs: { type: "string" }, slice: { type: "string" } } });
const DOCS = Number(args.values.docs ?? 100_000);
const DIMS = 384;
const CLIENTS = 8;
const QUIET_MS = 3_000;
const WRITE_EVERY_MS = 20;
const SLICE_MS = Number(args.values.slice ?? 10);

/** A clustered vector around one of 100 centres, the same in every run (as `bench:vectors`'s clustered corpus). */
function vectorOf(seed: number): Float32Array {
  return Float32Array.from(unitVector(seed, DIMS, true));
}

function changes(from: number, count: number, prefix = "d"): DocChange[] {
  return benchDocs(prefix, from, count).map(({ id, text, metadata }, i) => ({
    id,
    doc: { text, metadata, passages: [{ start: 0, end: text.length, vector: vectorOf(from + i) }] },
    previousParts: 0,
  }));
}

/** The longest gap between turns of the event loop while it runs, beyond the 1 ms asked for. */
function stallWatch(): { stop(): number } {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last - 1);
    last = now;
  }, 1);
  return {
    stop() {
      clearInterval(timer);
      return longest;
    },
  };
}

interface Phase {
  seconds: number;
  stall: number;
  p50: number;
  p99: number;
  worst: number;
  searches: number;
}

/** Runs `work` while 8 clients search and writes land, and measures what the clients saw meanwhile. */
async function during(index: SearchIndex, work: () => Promise<unknown>): Promise<Phase> {
  const latencies: number[] = [];
  let running = true;
  let written = 0;
  const clients = Array.from({ length: CLIENTS }, async (_, client) => {
    for (let q = 0; running; q++) {
      const started = performance.now();
      await nextTurn();
      index.search({
        mode: "vector",
        text: "",
        vector: vectorOf(50_000_000 + client * 100_000 + q),
        offset: 0,
        limit: 10,
      });
      latencies.push(performance.now() - started);
    }
  });
  // As the server does: the vectors of writes wait for the graph, which takes them in batches between turns, and a
  // write waits while too many wait.
  const writer = (async () => {
    while (running) {
      await new Promise((resolve) => setTimeout(resolve, WRITE_EVERY_MS));
      index.apply(changes(written++ * 10 % DOCS, 10), { revision: index.revision + 1, deferGraph: true });
      graphInserts.start("bench", index, () => true);
      await graphInserts.backlogWithinBound(index);
    }
  })();
  await new Promise((resolve) => setTimeout(resolve, 200));
  latencies.length = 0;
  const watch = stallWatch();
  const started = performance.now();
  await work();
  const seconds = (performance.now() - started) / 1000;
  const stall = watch.stop();
  running = false;
  await Promise.all([...clients, writer]);
  await background.idle();
  const [p50, p99, worst] = [0.5, 0.99, 1].map((q) => quantile(latencies, q));
  return { seconds, stall, p50: p50!, p99: p99!, worst: worst!, searches: latencies.length };
}

const background = new BackgroundTasks();
const graphInserts = new GraphInserts(background);
const graphs = await loadAnnGraphs();
const index = new SearchIndex({ revision: 0, graphs });
const started = performance.now();
for (let from = 0; from < DOCS; from += 1_000) index.apply(changes(from, Math.min(1_000, DOCS - from)));
index.flushGraph();
const tuning = index.vectorTuning();
while (tuning !== undefined && !tuning.next().done);
console.log(
  `loaded ${DOCS} docs in ${((performance.now() - started) / 1000).toFixed(1)} s; plan ${
    JSON.stringify(index.vectorPlan)
  }`,
);

const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
const kv = await Deno.openKv(kvPath);
/** The latest snapshot's size. */
let snapshotBytes = 0;
// Stored as it is encoded, as the server does; with slices, paced as the server paces it.
const snapshot = (slices?: TimeSlices) => async () => {
  const pieces = encodeSearchSnapshot(index, slices);
  const pace = slices === undefined ? undefined : () => slices.next();
  const pointer = await writeSnapshot(kv, "bench", { revision: index.revision, pieces }, { pace });
  snapshotBytes = pointer?.bytes ?? 0;
};
const quiet = await during(index, () => new Promise((resolve) => setTimeout(resolve, QUIET_MS)));
console.log(`${DOCS} docs, ${CLIENTS} searching clients, a 10-doc write every ${WRITE_EVERY_MS} ms:`);
const report = (name: string, phase: Phase) =>
  console.log(
    `  ${name.padEnd(24)} ${phase.seconds.toFixed(2)} s, longest event-loop stall ${ms(phase.stall)}, ` +
      `search p50 ${ms(phase.p50)} p99 ${ms(phase.p99)} (${(phase.p99 / quiet.p99).toFixed(2)}× quiet) ` +
      `slowest ${ms(phase.worst)}, ${phase.searches} searches`,
  );
report("no snapshot", quiet);
for (const slices of [undefined, SLICE_MS]) {
  const make = () => snapshot(slices === undefined ? undefined : new TimeSlices(slices));
  // Alone first, so that the longest stall is the snapshot's own, not a search's or a write's.
  const watch = stallWatch();
  await make()();
  const own = watch.stop();
  const phase = await during(index, make());
  report(slices === undefined ? "snapshot without slices" : `snapshot in ${slices} ms slices`, phase);
  console.log(
    `    alone: its longest stall ${ms(own)}; the snapshot under load: ${(snapshotBytes / 2 ** 20).toFixed(0)} MiB`,
  );
}
kv.close();
await Deno.remove(kvPath);
