/**
 * Vectors join the HNSW graph in batches between requests: a write, a graph's creation and a load leave them waiting,
 * searches scan them meanwhile, and the server adds them in the background.
 */
import assert from "node:assert/strict";
import { loadAnnGraphs } from "../../src/search/ann_graphs.ts";
import { SearchIndex } from "../../src/search/search_index.ts";
import { EXACT_SEARCH_MAX_VECTORS } from "../../src/search/vector_candidates.ts";
import { Embedder } from "../../src/embedding/embedder.ts";
import { BackgroundTasks } from "../../src/concurrency/background_tasks.ts";
import {
  graphFillWanted,
  GraphInserts,
  MAX_GRAPH_BACKLOG,
  tuningWaitsForGraph,
} from "../../src/index_state/graph_inserts.ts";
import type { IndexRecord } from "../../src/storage/index_records.ts";
import { indexKey } from "../../src/storage/kv_keys.ts";
import { readSnapshot } from "../../src/storage/snapshot_store.ts";
import { metricsText } from "../_server_process.ts";
import { decodeSearchSnapshot } from "../../src/search/search_snapshot_codec.ts";
import { asForeground } from "../../src/util/time_slices.ts";
import { snapshotBytes, startTestServer, testModels } from "../_helpers.ts";
import { normals } from "../_vectors.ts";

const DIMS = 8;
const normal = normals(11);

function vector(): number[] {
  return Array.from({ length: DIMS }, normal);
}

function docs(prefix: string, count: number) {
  return Array.from({ length: count }, (_, i) => ({ id: `${prefix}${i}`, text: `doc ${i}`, vector: vector() }));
}

/** Changes that put `count` documents of one passage each into a search index. */
function changesOf(prefix: string, count: number) {
  return docs(prefix, count).map(({ id, text, vector }) => ({
    id,
    doc: { text, passages: [{ start: 0, end: text.length, vector: Float32Array.from(vector) }] },
    previousParts: 0,
  }));
}

/** The index as a snapshot restores it, with a tuned plan that scans every code or searches the graph. */
async function withPlan(index: SearchIndex, { scan }: { scan: boolean }): Promise<SearchIndex> {
  const tuned = { ...index.vectorPlan, scan, tunedAt: index.passageCount, heldAt: index.graphVectors };
  // An index whose snapshot views carry the tuned plan in place of its own.
  const viewed = {
    openSnapshotView: () => Object.defineProperty(index.openSnapshotView(), "plan", { value: tuned }),
  } as unknown as SearchIndex;
  return await decodeSearchSnapshot(await snapshotBytes(viewed), { graphs: await loadAnnGraphs() });
}

Deno.test("a new graph's vectors, and those written with deferGraph, wait until flushGraph adds as many as asked", async () => {
  const index = new SearchIndex({ revision: 0, graphs: await loadAnnGraphs() });
  index.apply(changesOf("a", EXACT_SEARCH_MAX_VECTORS + 1), { deferGraph: true });
  assert.equal(index.pendingGraphInserts, EXACT_SEARCH_MAX_VECTORS + 1, "the graph is created empty");
  assert.ok(index.graphInsertsDue);
  index.flushGraph(128);
  assert.equal(index.pendingGraphInserts, EXACT_SEARCH_MAX_VECTORS + 1 - 128);
  index.flushGraph();
  assert.equal(index.pendingGraphInserts, 0);
  assert.equal(index.graphInsertsDue, false);
  const late = changesOf("b", 600);
  index.apply(late, { deferGraph: true });
  assert.equal(index.pendingGraphInserts, 600);
  const own = late[599]!.doc.passages[0]!.vector;
  assert.equal(index.search({ mode: "vector", text: "", vector: own, offset: 0, limit: 1 }).hits[0]!.id, "b599");
  // Without deferGraph, a write that leaves many waiting adds them all at once.
  index.apply(changesOf("c", 1));
  assert.equal(index.pendingGraphInserts, 0);
});

Deno.test("with most vectors waiting for the graph, a search scans all codes and finds waiting and graph vectors", async () => {
  const index = new SearchIndex({ revision: 0, graphs: await loadAnnGraphs() });
  const changes = changesOf("a", 2 * EXACT_SEARCH_MAX_VECTORS);
  index.apply(changes, { deferGraph: true });
  // A tenth in the graph, the rest waiting: more than a quarter waits.
  index.flushGraph(EXACT_SEARCH_MAX_VECTORS / 5);
  for (const i of [0, 1_000, EXACT_SEARCH_MAX_VECTORS, 2 * EXACT_SEARCH_MAX_VECTORS - 1]) {
    const own = changes[i]!.doc.passages[0]!.vector;
    const hits = index.search({ mode: "vector", text: "", vector: own, offset: 0, limit: 1 }).hits;
    assert.equal(hits[0]!.id, `a${i}`);
  }
});

Deno.test("a writer waits while more vectors wait for the graph than the bound, and the rest go in after", async () => {
  const graphed = new SearchIndex({ revision: 0, graphs: await loadAnnGraphs() });
  graphed.apply(changesOf("a", EXACT_SEARCH_MAX_VECTORS + 1));
  const index = await withPlan(graphed, { scan: false });
  assert.equal(index.pendingGraphInserts, 0);
  const background = new BackgroundTasks();
  const inserts = new GraphInserts(background);
  index.apply(changesOf("b", MAX_GRAPH_BACKLOG + 3_000), { deferGraph: true });
  inserts.start("i", index, () => true);
  assert.equal(inserts.waiting(), MAX_GRAPH_BACKLOG + 3_000);
  let released = false;
  const waiting = inserts.backlogWithinBound(index).then(() => released = true);
  await Promise.resolve();
  assert.equal(released, false, "the writer waits");
  await waiting;
  assert.ok(index.pendingGraphInserts <= MAX_GRAPH_BACKLOG, `${index.pendingGraphInserts} wait once released`);
  await background.idle();
  assert.equal(index.pendingGraphInserts, 0);
  assert.equal(inserts.waiting(), 0);

  // An index no longer kept is left as it is, and its writers are released.
  index.apply(changesOf("c", MAX_GRAPH_BACKLOG + 1_000), { deferGraph: true });
  inserts.start("i", index, () => false);
  await inserts.backlogWithinBound(index);
  await background.idle();
  assert.equal(index.pendingGraphInserts, MAX_GRAPH_BACKLOG + 1_000);
});

Deno.test("an index whose searches scan every code fills its graph only to be tuned again, while idle; writers never wait", async () => {
  const graphed = new SearchIndex({ revision: 0, graphs: await loadAnnGraphs() });
  graphed.apply(changesOf("a", EXACT_SEARCH_MAX_VECTORS + 1));
  const index = await withPlan(graphed, { scan: true });
  assert.equal(index.vectorPlan.scan, true);
  const background = new BackgroundTasks();
  const inserts = new GraphInserts(background);
  // Grown by less than half since its tuning: its graph, which no search reads, takes nothing.
  const grown = MAX_GRAPH_BACKLOG + 1_000;
  index.apply(changesOf("b", grown), { deferGraph: true });
  inserts.start("i", index, () => true, { all: true });
  await background.idle();
  assert.equal(index.pendingGraphInserts, grown, "a scan's graph takes nothing before the index has grown by half");
  assert.equal(tuningWaitsForGraph(index), false);

  // Grown by half: the next tuning waits for a whole graph, which fills while the process is idle.
  const more = Math.ceil(index.vectorPlan.tunedAt / 2);
  index.apply(changesOf("c", more), { deferGraph: true });
  assert.equal(tuningWaitsForGraph(index), true);
  const { promise: finish, resolve: finishForeground } = Promise.withResolvers<void>();
  const foreground = asForeground(() => finish);
  inserts.start("i", index, () => true);
  await inserts.backlogWithinBound(index);
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(index.pendingGraphInserts, grown + more, "nothing joins the graph while a request runs");
  finishForeground();
  await foreground;
  await background.idle();
  assert.equal(index.pendingGraphInserts, 0, "all join it once the process is idle");
  assert.equal(tuningWaitsForGraph(index), false, "then it may be tuned");
});

Deno.test("inserts pause while a snapshot is written, but for those that writers wait for", async () => {
  const graphed = new SearchIndex({ revision: 0, graphs: await loadAnnGraphs() });
  graphed.apply(changesOf("a", EXACT_SEARCH_MAX_VECTORS + 1));
  const background = new BackgroundTasks();
  const inserts = new GraphInserts(background);
  const scanning = await withPlan(graphed, { scan: true });
  // Grown by half since its tuning, so that its graph is filled for the next one.
  const grown = Math.ceil(scanning.vectorPlan.tunedAt / 2);
  scanning.apply(changesOf("b", grown), { deferGraph: true });
  const { promise: written, resolve: finishWrite } = Promise.withResolvers<void>();
  const write = inserts.pausedDuring(() => written);
  inserts.start("s", scanning, () => true);
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(scanning.pendingGraphInserts, grown, "nothing joins the graph while the snapshot is written");

  // Writers wait for an index whose searches use the graph: its inserts go on.
  const searching = await withPlan(graphed, { scan: false });
  searching.apply(changesOf("c", MAX_GRAPH_BACKLOG + 1_000), { deferGraph: true });
  inserts.start("g", searching, () => true);
  await inserts.backlogWithinBound(searching);
  assert.ok(searching.pendingGraphInserts <= MAX_GRAPH_BACKLOG, "the waiting writer is released");
  finishWrite();
  await write;
  await background.idle();
  assert.equal(scanning.pendingGraphInserts, 0, "the paused inserts go on once the snapshot is written");
});

Deno.test("the server adds waiting vectors to the graph in the background, and searches find them meanwhile", async () => {
  const registry = { ...await testModels(), "ext-8": { dimensions: DIMS, version: "ext-v1" } };
  await using server = await startTestServer({
    embedder: () => new Embedder(registry, { cacheDir: `${Deno.makeTempDirSync()}/models`, allowRemote: false }),
    // Room for one index, which a searched one takes: states read for snapshots are not kept.
    env: { SEARCH_CACHE_INDEXES: "1" },
  });
  await server.ok({ action: "createIndex", indexName: "other", docs: [{ id: "a", text: "another index" }] });
  await server.ok({ action: "search", indexName: "other", query: "index" });
  await server.ok({ action: "createIndex", indexName: "ext", modelId: "ext-8", docs: [] });
  // Texts long enough that each batch's log (past 1 MiB) calls for a snapshot.
  const padding = ` ${"x".repeat(1_100)}`;
  for (let from = 0; from < EXACT_SEARCH_MAX_VECTORS + 4_000; from += 1_000) {
    const batch = docs(`d${from}-`, 1_000).map((doc) => ({ ...doc, text: doc.text + padding }));
    await server.ok({ action: "addDocs", indexName: "ext", docs: batch });
  }
  const record = (await server.kv.get<IndexRecord>(indexKey("default", "ext"))).value!;
  // No search has loaded the index: its snapshots were written from states read for them, whose graphs are filled
  // before they are encoded.
  await server.service.context.background.idle();
  const graphs = await loadAnnGraphs();
  const stored = (await readSnapshot(server.kv, record.id, ({ chunks }) => decodeSearchSnapshot(chunks, { graphs })))!;
  assert.ok(stored.passageCount > EXACT_SEARCH_MAX_VECTORS);
  // Unless its tuned plan scans the codes (the prefilter may win on these 8-d vectors): then its graph is filled up to
  // what a tuning needs, and the rest joins it while the process is idle.
  const filled = stored.vectorPlan.scan ? EXACT_SEARCH_MAX_VECTORS : stored.passageCount;
  assert.ok(
    stored.passageCount - stored.pendingGraphInserts >= filled,
    "a snapshot's graph holds every one of its documents",
  );
  // Loaded from its snapshot and log: the vectors the log brings wait for the graph, and the load is answered first.
  const states = server.service.context.indexStates;
  const index = await states.get(record);
  assert.ok(index.passageCount > EXACT_SEARCH_MAX_VECTORS);
  await server.service.context.background.idle();
  // Unless the plan scans every code (these 8-d vectors may tune either way): then the graph, which no search reads,
  // takes nothing until the index has grown by half since its tuning.
  const filledNow = graphFillWanted(index);
  assert.ok(filledNow || index.vectorPlan.scan);
  const waiting = filledNow ? 0 : index.pendingGraphInserts;
  assert.equal(index.pendingGraphInserts, waiting, "the new graph holds every vector it should");

  const late = docs("late", 600);
  await server.ok({ action: "addDocs", indexName: "ext", docs: late });
  const found = await server.ok({
    action: "search",
    indexName: "ext",
    mode: "vector",
    vector: late[123]!.vector,
    limit: 1,
  });
  assert.equal((found as { hits: { id: string }[] }).hits[0]!.id, "late123");
  await server.service.context.background.idle();
  if (filledNow) {
    assert.equal(index.pendingGraphInserts, 0);
    assert.equal(index.graphInsertsDue, false);
  } else {
    assert.equal(index.pendingGraphInserts, waiting + late.length, "a scan's graph took none of them either");
  }
  assert.match(await metricsText(server), /^quire_graph_inserts_waiting 0$/m);
});

Deno.test("a state read for a snapshot stays in memory when it fits, and later writes keep it and its graph current", async () => {
  const registry = { ...await testModels(), "ext-8": { dimensions: DIMS, version: "ext-v1" } };
  await using server = await startTestServer({
    embedder: () => new Embedder(registry, { cacheDir: `${Deno.makeTempDirSync()}/models`, allowRemote: false }),
  });
  await server.ok({ action: "createIndex", indexName: "ext", modelId: "ext-8", docs: [] });
  const padding = ` ${"x".repeat(1_100)}`;
  for (let from = 0; from < EXACT_SEARCH_MAX_VECTORS + 4_000; from += 1_000) {
    const batch = docs(`d${from}-`, 1_000).map((doc) => ({ ...doc, text: doc.text + padding }));
    await server.ok({ action: "addDocs", indexName: "ext", docs: batch });
  }
  await server.service.context.background.idle();
  const record = (await server.kv.get<IndexRecord>(indexKey("default", "ext"))).value!;
  const { indexStates, metrics } = server.service.context;
  assert.ok(indexStates.bytesOf(record.id) > 0, "no search asked for it, yet it is in memory");
  const before = Object.fromEntries(metrics.loads());
  const index = await indexStates.get(record);
  // Every vector, unless the plan scans every code (these 8-d vectors may tune either way): then the graph, which no
  // search reads, takes none until the index has grown by half since its tuning.
  if (graphFillWanted(index)) assert.equal(index.pendingGraphInserts, 0, "its graph took every vector");
  else assert.ok(index.vectorPlan.scan && index.pendingGraphInserts > 0, "a scan's graph took none since its tuning");
  const after = Object.fromEntries(metrics.loads());
  assert.equal(after.snapshot ?? 0, before.snapshot ?? 0, "the first search reads no snapshot");
  assert.equal(after.full ?? 0, before.full ?? 0, "nor the document records");
});

Deno.test("a closing server stops its graph inserts at their next batch rather than waiting for every vector", async () => {
  const registry = { ...await testModels(), "ext-8": { dimensions: DIMS, version: "ext-v1" } };
  const server = await startTestServer({
    embedder: () => new Embedder(registry, { cacheDir: `${Deno.makeTempDirSync()}/models`, allowRemote: false }),
    env: { SEARCH_CACHE_INDEXES: "1" },
  });
  let index: SearchIndex;
  try {
    await server.ok({ action: "createIndex", indexName: "other", docs: [{ id: "a", text: "another index" }] });
    await server.ok({ action: "search", indexName: "other", query: "index" });
    await server.ok({ action: "createIndex", indexName: "ext", modelId: "ext-8", docs: [] });
    for (let from = 0; from < EXACT_SEARCH_MAX_VECTORS + 10_000; from += 1_000) {
      await server.ok({ action: "addDocs", indexName: "ext", docs: docs(`d${from}-`, 1_000) });
    }
    // A search loads the index (the one the cache keeps now) and answers first; its vectors then join a new graph.
    await server.ok({ action: "search", indexName: "ext", mode: "vector", vector: vector() });
    const current = async () => {
      const record = (await server.kv.get<IndexRecord>(indexKey("default", "ext"))).value!;
      return await server.service.context.indexStates.get(record);
    };
    index = await current();
    // A snapshot written meanwhile may hold most of them in its graph: more writes then leave more waiting.
    for (let more = 0; index.pendingGraphInserts < 1_000 && more < 5; more++) {
      await server.ok({ action: "addDocs", indexName: "ext", docs: docs(`more${more}-`, 2_000) });
      index = await current();
    }
    assert.ok(index.pendingGraphInserts >= 1_000, `${index.pendingGraphInserts} waiting before the close`);
  } finally {
    await server.close();
  }
  assert.ok(index.pendingGraphInserts > 0, "the close did not wait for every insert");
});
