/**
 * What a tuning of the vector plan (see `tuneVectorPlan`) reads of an index: its graph and codes to measure, its
 * vectors to rank by exact cosine, its recent queries, and passages of its graph, sampled repeatably, to query with
 * until it has queries of its own.
 */
import type { AnnIndex } from "./ann_index.ts";
import type { DocSlots } from "./doc_slots.ts";
import type { GraphQueue } from "./graph_queue.ts";
import type { TuningProbe } from "./vector_plan.ts";
import type { VectorStore } from "./vector_store.ts";
import { mulberry32 } from "../util/seeded_random.ts";

/** The parts of an index that a tuning probe reads, besides its graph. */
export interface ProbedIndex {
  docs: DocSlots;
  vectors: VectorStore;
  /** The passages waiting to join the graph. */
  graph: GraphQueue;
  /** The latest query vectors that the graph side served, oldest first; the probe copies them when asked. */
  recentQueries: readonly Float32Array[];
}

/** The probe of an index whose graph is `ann`, as it stands when called. */
export function tuningProbe(ann: AnnIndex, index: ProbedIndex): TuningProbe {
  const { docs, vectors, graph, recentQueries } = index;
  return {
    passages: docs.passageCount,
    held: ann.size,
    sample: (count) => samplePassages(docs, graph, count),
    recent: () => [...recentQueries],
    vector: (passage) => vectors.row(passage),
    graph: (query, count, breadth) => ann.search(query, count, breadth),
    scan: (query, count, depth) => ann.scan(query, count, depth),
    scanThreads: ann.scanThreads,
    inGraph: (passage) => !graph.has(passage),
    rank: (query, candidates, self) => {
      const owners = docs.owners;
      const scored = vectors.scores(query, candidates.filter((p) => p !== self && owners[p]! >= 0));
      return scored.slots.map((slot, i) => [slot, scored.scores[i]!] as const).sort((a, b) => b[1] - a[1])
        .map(([slot]) => slot);
    },
  };
}

/** `count` distinct passages in the graph, drawn with a generator seeded by how many there are (so, repeatably). */
function samplePassages(docs: DocSlots, graph: GraphQueue, count: number): number[] {
  const inGraph = [...docs.occupiedPassages()].filter((passage) => !graph.has(passage));
  const random = mulberry32(inGraph.length);
  const picked = new Set<number>();
  while (picked.size < Math.min(count, inGraph.length)) {
    picked.add(inGraph[(random() * inGraph.length) | 0]!);
  }
  return [...picked];
}
