/**
 * Tuning how vector candidates are found: from an index's own vectors, to the least graph breadth that finds the true
 * nearest, or to an exact scan of int8 codes when that is cheaper; in short steps; again once the index has grown.
 */
import assert from "node:assert/strict";
import { loadAnnGraphs } from "../../src/search/ann_graphs.ts";
import type { DocUpdate } from "../../src/search/indexed_doc.ts";
import { SearchIndex } from "../../src/search/search_index.ts";
import { EXACT_SEARCH_MAX_VECTORS } from "../../src/search/vector_candidates.ts";
import { VectorStore } from "../../src/search/vector_store.ts";
import { decodeSearchSnapshot } from "../../src/search/search_snapshot_codec.ts";
import { snapshotBytes } from "../_helpers.ts";
import { tuneVectorPlan, type TuningProbe, type VectorPlan } from "../../src/search/vector_plan.ts";
import { normals } from "../_vectors.ts";

const graphs = await loadAnnGraphs();

/** `count` unit vectors of `dims` dimensions: uniform on the sphere, or around the same 20 centres for every seed. */
function unitVectors(count: number, dims: number, kind: "random" | "clustered", seed: number): Float32Array[] {
  const centreNormal = normals(0);
  const centres = Array.from({ length: 20 }, () => Float32Array.from({ length: dims }, centreNormal));
  const normal = normals(seed);
  return Array.from({ length: count }, (_, i) => {
    const centre = centres[i % centres.length]!;
    const vector = Float32Array.from(
      { length: dims },
      (_, j) => kind === "random" ? normal() : centre[j]! + 0.5 * normal(),
    );
    const length = Math.hypot(...vector);
    return vector.map((x) => x / length);
  });
}

function docs(vectors: Float32Array[], from = 0): DocUpdate[] {
  return vectors.map((vector, i) => ({
    id: `d${from + i}`,
    doc: { text: "", passages: [{ start: 0, end: 0, vector }] },
  }));
}

function vectorSearch(index: SearchIndex, vector: Float32Array, exact: boolean): string[] {
  const query = { mode: "vector" as const, text: "", vector, offset: 0, limit: 10 };
  return index.search(exact ? { ...query, filter: () => true } : query).hits.map((hit) => hit.id);
}

function recall(index: SearchIndex, queries: Float32Array[]): number {
  let found = 0;
  for (const query of queries) {
    const exact = new Set(vectorSearch(index, query, true));
    found += vectorSearch(index, query, false).filter((id) => exact.has(id)).length;
  }
  return found / (queries.length * 10);
}

/** Runs a tuning to its end; returns its steps' count and the longest step in ms. */
function tune(index: SearchIndex): { steps: number; longestMs: number } {
  const steps = index.vectorTuning();
  assert.ok(steps !== undefined, "a tuning is due");
  let count = 0;
  let longestMs = 0;
  for (;;) {
    const started = performance.now();
    const step = steps.next();
    longestMs = Math.max(longestMs, performance.now() - started);
    if (step.done) return { steps: count, longestMs };
    count++;
  }
}

for (const kind of ["random", "clustered"] as const) {
  Deno.test(`on ${kind} vectors the tuned plan keeps recall@10 at 0.95 or more, and retunes after growth`, () => {
    const index = new SearchIndex({ revision: 0, graphs });
    index.apply(docs(unitVectors(12_000, 48, kind, 1)));
    index.flushGraph();
    assert.equal(index.vectorPlan.tunedAt, 0);
    const { steps, longestMs } = tune(index);
    const plan = index.vectorPlan;
    assert.equal(plan.tunedAt, 12_000);
    assert.ok(steps >= 24, `${steps} steps`);
    // Each step is one search of 12,000 small vectors, a few ms; the margin is for a busy machine.
    assert.ok(longestMs < 150, `a step took ${longestMs} ms`);
    assert.equal(index.vectorTuning(), undefined, "not due again before the index grows by half or has queries");
    const queries = unitVectors(60, 48, kind, 2);
    assert.ok(recall(index, queries) >= 0.95, `recall ${recall(index, queries)} with ${JSON.stringify(plan)}`);

    index.apply(docs(unitVectors(6_000, 48, kind, 3), 12_000));
    index.flushGraph();
    tune(index);
    assert.equal(index.vectorPlan.tunedAt, 18_000);
    assert.ok(recall(index, queries) >= 0.95, JSON.stringify(index.vectorPlan));
  });
}

for (const plan of [{ scan: true, breadth: 0 }, { scan: false, breadth: 256 }]) {
  Deno.test(`vectors still waiting for the graph are found by their codes (${plan.scan ? "scan" : "graph"} plan)`, () => {
    const index = new SearchIndex({
      revision: 0,
      graphs,
      ann: graphs.create(48),
      plan: { ...plan, recall: 1, tunedAt: 12_000, queries: "recent" },
    });
    index.apply(docs(unitVectors(12_000, 48, "random", 8)));
    index.flushGraph();
    // Far more wait than a search asks the graph for (200): the search must pick the nearest of them.
    const waiting = unitVectors(3_000, 48, "random", 9);
    index.apply(docs(waiting, 12_000), { deferGraph: true });
    assert.equal(index.pendingGraphInserts, 3_000);
    for (const i of [0, 1_234, 2_999]) assert.equal(vectorSearch(index, waiting[i]!, false)[0], `d${12_000 + i}`);
    const queries = unitVectors(40, 48, "random", 10);
    assert.ok(recall(index, queries) >= 0.95, `recall ${recall(index, queries)}`);
    // Removed while waiting: found no more.
    index.apply([{ id: "d13234", doc: null }], { deferGraph: true });
    assert.ok(!vectorSearch(index, waiting[1_234]!, false).includes("d13234"));
  });
}

Deno.test("a scan plan's depth grows with the index until it is tuned again, so that its recall holds", () => {
  const plan: VectorPlan = { scan: true, breadth: 0, depth: 1024, recall: 1, tunedAt: 12_000, queries: "recent" };
  const index = new SearchIndex({ revision: 0, graphs, ann: graphs.create(48), plan });
  index.apply(docs(unitVectors(12_000, 48, "random", 11)));
  index.flushGraph();
  const queries = unitVectors(60, 48, "random", 12);
  const tuned = recall(index, queries);
  // A bulk load: four times the vectors, none in the graph, and no retuning (it waits for a whole graph).
  index.apply(docs(unitVectors(36_000, 48, "random", 13), 12_000), { deferGraph: true });
  assert.equal(index.vectorPlan.depth, 1024, "not tuned again");
  const grown = recall(index, queries);
  assert.ok(grown >= 0.95 && grown >= tuned - 0.03, `recall ${tuned} when tuned, ${grown} at four times the size`);
});

Deno.test("a snapshot keeps the tuned plan", async () => {
  const index = new SearchIndex({ revision: 0, graphs });
  index.apply(docs(unitVectors(12_000, 48, "clustered", 11)));
  index.flushGraph();
  tune(index);
  const bytes = await snapshotBytes(index);
  assert.deepEqual((await decodeSearchSnapshot(bytes, { graphs })).vectorPlan, index.vectorPlan);
});

Deno.test("the exact scan of int8 codes finds a vector's slot first, and no longer once it is removed", () => {
  const vectors = unitVectors(2_000, 48, "random", 4);
  const store = new VectorStore();
  vectors.forEach((vector, slot) => store.set(slot, vector));
  const ann = graphs.create(48);
  ann.add([...vectors.keys()], store);
  ann.encode([...vectors.keys()], store);
  for (const slot of [0, 5, 1_999]) {
    assert.equal(ann.scan(vectors[slot]!, 10)[0], slot);
    assert.equal(ann.search(vectors[slot]!, 10, 64)[0], slot);
  }
  ann.remove(5);
  assert.ok(!ann.scan(vectors[5]!, 10).includes(5));
  // Slot 5 again, with another vector: its codes are written anew.
  store.set(5, vectors[7]!);
  ann.add([5], store);
  ann.encode([5], store);
  assert.deepEqual(new Set(ann.scan(vectors[7]!, 2)), new Set([5, 7]));
});

Deno.test("a scan among some slots finds the nearest of those alone, by their codes", () => {
  const vectors = unitVectors(2_000, 48, "random", 6);
  const store = new VectorStore();
  vectors.forEach((vector, slot) => store.set(slot, vector));
  const ann = graphs.create(48);
  // Codes without the graph: the vectors that wait to join it.
  ann.encode([...vectors.keys()], store);
  const among = [...vectors.keys()].filter((slot) => slot % 3 === 0);
  const found = ann.scanAmong(vectors[300]!, 5, among);
  assert.equal(found[0], 300);
  assert.ok(found.every((slot) => slot % 3 === 0), JSON.stringify(found));
  assert.equal(ann.scanAmong(vectors[1]!, 5, among)[0] === 1, false);
  // Few enough to take them all.
  assert.deepEqual(ann.scanAmong(vectors[1]!, 5, [1, 2]), [1, 2]);
});

Deno.test("the exact scan finds live vectors that are all opposite the query, however many free slots outrank them", () => {
  // Every vector leans towards the first axis, the query points away from it: every cosine is negative, below the 0
  // of a free slot's zero codes.
  const vectors = unitVectors(2_000, 48, "random", 5).map((vector) => {
    const leaning = vector.map((x, i) => i === 0 ? Math.abs(x) + 2 : x);
    const length = Math.hypot(...leaning);
    return leaning.map((x) => x / length);
  });
  const store = new VectorStore();
  vectors.forEach((vector, slot) => store.set(slot, vector));
  const ann = graphs.create(48);
  ann.add([...vectors.keys()], store);
  ann.encode([...vectors.keys()], store);
  for (let slot = 100; slot < 2_000; slot++) ann.remove(slot);
  const query = new Float32Array(48);
  query[0] = -1;
  const found = ann.scan(query, 10);
  assert.equal(found.length, 10);
  assert.ok(found.every((slot) => slot < 100), JSON.stringify(found));
});

/** What a prefiltered scan of a fake probe costs, and the least depth at which it finds the true nearest. */
interface Prefilter {
  ms: number;
  enough: number;
}

/**
 * A probe of `passages` passages (`held` of them in the graph) whose graph finds the true nearest from `enough` breadth
 * on; costs are busy waits.
 */
function fakeProbe(
  enough: number,
  costs: { scanMs: number; graphMs: number },
  held = 1_000,
  { passages = 1_000, prefilter = { ms: 0, enough: Infinity }, scanThreads = 1 }: {
    passages?: number;
    prefilter?: Prefilter;
    scanThreads?: number;
  } = {},
): TuningProbe {
  const busy = (ms: number) => {
    const until = performance.now() + ms;
    while (performance.now() < until) { /* the cost of a search */ }
  };
  const truth = [...Array(10).keys()];
  return {
    passages,
    held,
    sample: (count) => [...Array(count).keys()].map((i) => 100 + i),
    recent: () => [],
    vector: () => new Float32Array(4),
    scan: (_query, count, depth) => {
      busy(depth === undefined ? costs.scanMs : prefilter.ms);
      const found = depth === undefined || depth >= prefilter.enough;
      return found ? [...truth, ...Array(count - 10).fill(999)] : Array(count).fill(999);
    },
    scanThreads,
    graph: (_query, count, breadth) => (busy(costs.graphMs), breadth >= enough ? truth : Array(count).fill(999)),
    inGraph: () => true,
    rank: (_query, candidates) => candidates,
  };
}

function runToEnd(steps: Generator<void, VectorPlan | undefined>): VectorPlan | undefined {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

Deno.test("tuning picks the least breadth that finds the nearest while the graph is cheaper than the scan", () => {
  const plan = runToEnd(tuneVectorPlan(fakeProbe(256, { scanMs: 2, graphMs: 0 }), 200));
  assert.deepEqual(plan, { scan: false, breadth: 256, recall: 1, tunedAt: 1_000, heldAt: 1_000, queries: "sampled" });
});

Deno.test("tuning picks the exact scan once the graph costs more, or finds too little at any breadth", () => {
  assert.equal(runToEnd(tuneVectorPlan(fakeProbe(256, { scanMs: 0, graphMs: 1 }), 200))?.scan, true);
  assert.equal(runToEnd(tuneVectorPlan(fakeProbe(Infinity, { scanMs: 0.5, graphMs: 0 }), 200))?.scan, true);
});

Deno.test("a scan on two threads is weighed at its time on both against the graph, which runs on one", () => {
  const costs = { scanMs: 2, graphMs: 3 };
  assert.equal(runToEnd(tuneVectorPlan(fakeProbe(256, costs), 200))?.scan, true, "one thread: the scan costs less");
  const twoThreads = fakeProbe(256, costs, 1_000, { scanThreads: 2 });
  assert.equal(runToEnd(tuneVectorPlan(twoThreads, 200))?.scan, false, "two threads: the graph costs less");
});

Deno.test("a graph that holds a tenth of the index is weighed against a tenth of the scan's cost", () => {
  const costs = { scanMs: 4, graphMs: 1 };
  assert.equal(runToEnd(tuneVectorPlan(fakeProbe(256, costs), 200))?.scan, false, "the whole graph costs less");
  assert.equal(runToEnd(tuneVectorPlan(fakeProbe(256, costs, 100), 200))?.scan, true, "a tenth of it does not");
});

Deno.test("tuning picks the least prefilter depth that finds the nearest, when it costs less than every code", () => {
  const costs = { scanMs: 3, graphMs: 1 };
  const index = { passages: 100_000 };
  const cheap = { ...index, prefilter: { ms: 0.5, enough: 4_096 } };
  assert.deepEqual(
    runToEnd(tuneVectorPlan(fakeProbe(Infinity, costs, 100_000, cheap), 200)),
    { scan: true, breadth: 0, depth: 4_096, recall: 1, tunedAt: 100_000, heldAt: 100_000, queries: "sampled" },
  );
  const graph = runToEnd(tuneVectorPlan(fakeProbe(256, costs, 100_000, cheap), 200));
  assert.equal(graph?.depth, 4_096, "a graph that costs more than the prefiltered scan loses to it");
  const dear = { ...index, prefilter: { ms: 4, enough: 1_024 } };
  assert.equal(runToEnd(tuneVectorPlan(fakeProbe(Infinity, costs, 100_000, dear), 200))?.depth, undefined);
  const small = { passages: 1_000, prefilter: { ms: 0, enough: 1_024 } };
  assert.equal(
    runToEnd(tuneVectorPlan(fakeProbe(Infinity, costs, 1_000, small), 200))?.depth,
    undefined,
    "no depth is tried past half the index",
  );
});

Deno.test("while the graph lags, scans are measured against the nearest of every code, the graph against its own", () => {
  // The 10 nearest of every code wait to join the graph; the graph finds the next 10, the nearest that it holds.
  const own = [...Array(10).keys()].map((i) => 10 + i);
  const lagging = (graphMs: number): TuningProbe => {
    const probe = fakeProbe(256, { scanMs: 3, graphMs }, 50_000, {
      passages: 100_000,
      prefilter: { ms: 0.5, enough: 4_096 },
    });
    return {
      ...probe,
      inGraph: (passage) => passage >= 10,
      scan: (query, count, depth) => {
        const found = probe.scan(query, count, depth);
        return depth === undefined ? [...found.slice(0, 10), ...own, ...found.slice(20)] : found;
      },
      graph: (query, count, breadth) => probe.graph(query, count, breadth).length === 10 ? own : Array(count).fill(999),
    };
  };
  assert.equal(
    runToEnd(tuneVectorPlan(lagging(1), 200))?.depth,
    4_096,
    "the prefilter finds the nearest of every code",
  );
  assert.deepEqual(
    runToEnd(tuneVectorPlan(lagging(0), 200)),
    { scan: false, breadth: 256, recall: 1, tunedAt: 100_000, heldAt: 50_000, queries: "sampled" },
    "the graph finds the nearest that it holds",
  );
});

Deno.test("an index does not tune until its graph holds as many vectors as the least index that has a graph", () => {
  const index = new SearchIndex({ revision: 0, graphs });
  index.apply(docs(unitVectors(EXACT_SEARCH_MAX_VECTORS + 2_000, 48, "clustered", 8)), { deferGraph: true });
  index.flushGraph(EXACT_SEARCH_MAX_VECTORS - 1);
  assert.equal(index.vectorTuning(), undefined);
  index.flushGraph(1);
  assert.notEqual(index.vectorTuning(), undefined);
});

Deno.test("once the graph has served 24 queries after a tuning on sampled ones, the index retunes on them", () => {
  const index = new SearchIndex({ revision: 0, graphs });
  index.apply(docs(unitVectors(12_000, 48, "clustered", 6)));
  index.flushGraph();
  tune(index);
  assert.equal(index.vectorPlan.queries, "sampled");
  const queries = unitVectors(24, 48, "clustered", 7);
  for (const query of queries.slice(0, 23)) vectorSearch(index, query, false);
  assert.equal(index.vectorTuning(), undefined, "23 queries are not enough");
  vectorSearch(index, queries[23]!, false);
  tune(index);
  assert.equal(index.vectorPlan.queries, "recent");
  assert.equal(index.vectorTuning(), undefined, "not again until the index grows");
  assert.ok(recall(index, queries) >= 0.95, JSON.stringify(index.vectorPlan));
});

Deno.test("tuning decides nothing when the graph holds too few vectors to sample (all still waiting to enter it)", () => {
  const probe = { ...fakeProbe(256, { scanMs: 0, graphMs: 0 }), sample: () => [1, 2, 3] };
  assert.equal(runToEnd(tuneVectorPlan(probe, 200)), undefined);
});
