/**
 * How an index's graph side finds vector candidates, tuned from the index's own vectors: the least HNSW breadth whose
 * candidates hold the true nearest neighbours of sampled queries, or a scan of int8 codes when that is cheaper. No
 * fixed breadth serves every corpus: a clustered one reaches recall 0.97 at a breadth of a few hundred, while
 * near-random vectors need 2,048 or more, at which point the scan costs less. The scan itself is tuned the same way: the
 * least depth of a prefilter by sign bits that keeps the true nearest, or every code.
 */

/** The tuned way to find candidates. */
export interface VectorPlan {
  /** Scan the codes instead of searching the graph. */
  scan: boolean;
  /** The graph search's breadth, when not scanning. */
  breadth: number;
  /** When scanning: how many vectors the sign bits propose for their codes to rank; absent to rank every code. */
  depth?: number;
  /** The share of the sampled queries' true 10 nearest among the candidates, as measured. */
  recall: number;
  /** The passages the index held when tuned; 0 before the first tuning. */
  tunedAt: number;
  /** The vectors its graph held then (absent in a plan kept before it was: as many as the passages). */
  heldAt?: number;
  /** Whether it was tuned on the index's recent queries, or on queries sampled from its vectors. */
  queries: "recent" | "sampled";
}

/** Before any tuning: the fixed breadth that served the benchmark's corpus. */
export const UNTUNED_PLAN: VectorPlan = {
  scan: false,
  breadth: 2048,
  recall: 0,
  tunedAt: 0,
  heldAt: 0,
  queries: "sampled",
};

/**
 * Breadths tried, least first; the first that reaches {@link TARGET_RECALL} wins. None is below the 200 candidates a
 * search asks for, since the graph searches with the larger of the two.
 */
const BREADTHS = [256, 512, 1024, 2048, 4096];
/**
 * Prefilter depths tried, least first, up to half the index. Near-random vectors need about a hundredth of the index
 * once the prefilter weighs the sign bits by the query's magnitudes, where counting differing bits needed far more.
 */
const DEPTHS = [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144];
/** Above the 0.95 that searches promise, for the noise of a sample; higher still on queries that are only guessed. */
const TARGET_RECALL = 0.97;
const SAMPLED_TARGET_RECALL = 0.98;
const SAMPLES = 24;
const NEAREST = 10;
/** The index retunes once it, or its graph, has grown by this factor since the last tuning. */
const RETUNE_GROWTH = 1.5;

/** How many recent queries an index keeps for tuning: with this many, it tunes on them. */
export const RECENT_QUERIES = 24;

/**
 * Whether an index of `passages` passages, `held` of them in its graph, with `recent` queries kept, should be
 * (re)tuned: before its first tuning, once it or its graph has grown by half (a graph catching up after a load, or
 * filled while the process was idle), and once it has queries of its own after a tuning on sampled ones.
 */
export function tuningDue(plan: VectorPlan, passages: number, held: number, recent: number): boolean {
  return plan.tunedAt === 0 || grownSinceTuning(plan, passages) ||
    held >= (plan.heldAt ?? plan.tunedAt) * RETUNE_GROWTH || (plan.queries === "sampled" && recent >= RECENT_QUERIES);
}

/** Whether an index of `passages` passages has grown enough since its last tuning (if any) to be tuned again. */
export function grownSinceTuning(plan: VectorPlan, passages: number): boolean {
  return plan.tunedAt > 0 && passages >= plan.tunedAt * RETUNE_GROWTH;
}

/**
 * The prefilter depth of a scan plan for an index of `passages` passages: the tuned depth, grown in proportion to the
 * index since its tuning, so that the share of the codes it ranks, and with it the recall, holds until a retuning. That
 * retuning waits for a whole graph (see `tuningWaitsForGraph`), which a bulk load leaves no idle time to fill: a depth
 * tuned at 100,000 vectors, kept as it was, gave recall@10 0.92-0.95 by a million.
 */
export function scanDepth(plan: VectorPlan, passages: number): number | undefined {
  if (plan.depth === undefined || passages <= plan.tunedAt) return plan.depth;
  return Math.ceil(plan.depth * passages / plan.tunedAt);
}

/** What tuning reads of an index. */
export interface TuningProbe {
  /** How many passages the index holds. */
  passages: number;
  /** How many of them the graph holds: fewer while some wait to join it. */
  held: number;
  /** Distinct stored passages, drawn at random. */
  sample(count: number): number[];
  /** The index's recent query vectors (copies), at most {@link RECENT_QUERIES}. */
  recent(): Float32Array[];
  /** The vector of a passage. */
  vector(passage: number): Float32Array;
  /** The `count` candidates of a graph search of `breadth`. */
  graph(query: Float32Array, count: number, breadth: number): number[];
  /** The `count` candidates of a scan of every code, or with a `depth`, of the prefiltered scan. */
  scan(query: Float32Array, count: number, depth?: number): number[];
  /** How many threads a scan's passes run on; a graph search runs on one. */
  scanThreads: number;
  /** Whether a passage is in the graph: while the graph lags, some wait to join it. */
  inGraph(passage: number): boolean;
  /** `candidates` that a document owns, nearest first by exact cosine, leaving out `self`. */
  rank(query: Float32Array, candidates: number[], self: number): number[];
}

/**
 * Tunes in small steps: it yields after every measured search, so that a caller can let requests in between, and
 * returns the plan; or undefined when the graph holds too few vectors to sample. `candidates` is how many candidates
 * a search asks for.
 */
export function* tuneVectorPlan(probe: TuningProbe, candidates: number): Generator<void, VectorPlan | undefined> {
  const tunedAt = probe.passages;
  const heldAt = probe.held;
  const recent = probe.recent();
  const fromRecent = recent.length >= RECENT_QUERIES;
  const queries = fromRecent ? recent.map((vector) => ({ vector, self: -1 })) : sampleQueries(probe);
  if (queries.length < SAMPLES) return undefined;
  const made = fromRecent ? "recent" : "sampled";
  // The true nearest among every code, which scans search, and among the graph's own vectors, which it searches.
  const truths: Set<number>[] = [];
  const graphTruths: Set<number>[] = [];
  let scanMs = 0;
  for (const { vector, self } of queries) {
    const started = performance.now();
    const found = probe.scan(vector, candidates);
    scanMs += performance.now() - started;
    const ranked = probe.rank(vector, found, self);
    truths.push(new Set(ranked.slice(0, NEAREST)));
    graphTruths.push(new Set(ranked.filter((passage) => probe.inGraph(passage)).slice(0, NEAREST)));
    yield;
  }
  // A graph that lags behind the index (its inserts wait while searches scan every code) is measured at its own size,
  // and the scans are weighed at that size too: the share of the codes that the graph holds.
  const graphShare = probe.held / probe.passages;
  scanMs *= graphShare / queries.length;
  const target = fromRecent ? TARGET_RECALL : SAMPLED_TARGET_RECALL;
  const measure = function* (
    find: (query: Float32Array) => number[],
    truths: Set<number>[],
  ): Generator<void, Measured> {
    let found = 0;
    let ms = 0;
    for (const [i, { vector }] of queries.entries()) {
      const started = performance.now();
      const proposed = find(vector);
      ms += performance.now() - started;
      for (const passage of proposed) if (truths[i]!.has(passage)) found++;
      yield;
    }
    return { ms: ms / queries.length, recall: found / truths.reduce((sum, truth) => sum + truth.size, 0) };
  };
  let scan: { depth?: number; ms: number; recall: number } = { ms: scanMs, recall: 1 };
  for (const depth of DEPTHS.filter((depth) => depth <= probe.passages / 2)) {
    const { ms, recall } = yield* measure((query) => probe.scan(query, candidates, depth), truths);
    if (ms * graphShare >= scan.ms) break;
    if (recall >= target) {
      scan = { depth, ms: ms * graphShare, recall };
      break;
    }
  }
  // Under concurrent searches, which the cores serve in turn, a scan costs its time on each of its threads.
  const scanCost = scan.ms * probe.scanThreads;
  for (const breadth of BREADTHS) {
    const { ms, recall } = yield* measure((query) => probe.graph(query, candidates, breadth), graphTruths);
    if (ms > scanCost) break;
    if (recall >= target) return { scan: false, breadth, recall, tunedAt, heldAt, queries: made };
  }
  const depth = scan.depth === undefined ? {} : { depth: scan.depth };
  return { scan: true, breadth: 0, ...depth, recall: scan.recall, tunedAt, heldAt, queries: made };
}

/** A way to find candidates, as measured on the tuning's queries. */
interface Measured {
  ms: number;
  recall: number;
}

/** A sampled query, and the passage it was taken from (left out of its answers), or -1. */
interface SampleQuery {
  vector: Float32Array;
  self: number;
}

/**
 * Queries like a client's, until the index has its own: half are stored passages (each left out of its own answers),
 * half the midpoints of two, which fall between a corpus's clusters, where a graph search finds its way less easily.
 * Clients' queries may still lie elsewhere (short query texts embed apart from long documents), hence the retuning on
 * them.
 */
function sampleQueries(probe: TuningProbe): SampleQuery[] {
  const passages = probe.sample(SAMPLES + SAMPLES / 2);
  // Copies: a passage slot may take another vector while the tuning runs.
  const stored = passages.slice(0, SAMPLES / 2).map((self) => ({ vector: probe.vector(self).slice(), self }));
  const between: SampleQuery[] = [];
  for (let i = SAMPLES / 2; i + 1 < passages.length; i += 2) {
    const a = probe.vector(passages[i]!);
    const b = probe.vector(passages[i + 1]!);
    between.push({ vector: a.map((x, j) => x + b[j]!), self: -1 });
  }
  return [...stored, ...between];
}
