/**
 * Adding the vectors that wait to join an index's HNSW graph: in the background, in batches sized to take about
 * {@link BATCH_MS} each, one per turn of the event loop (and fewer while requests keep it busy), so that no request
 * waits long for one; and a bound on how many may wait, which writers wait for, so that a bulk load cannot outrun the
 * graph, once tuning has found that its searches use the graph. An index whose searches scan every code instead (its
 * tuned plan) needs neither: its graph serves no search, so it takes vectors only once the index has grown enough to be
 * tuned again (which then weighs a whole graph), only while the process is otherwise idle, and writers never wait.
 */
import type { BackgroundTasks } from "../concurrency/background_tasks.ts";
import type { SearchIndex } from "../search/search_index.ts";
import type { NativeAllocator } from "../util/native_allocator.ts";
import { collectGarbageNow } from "../util/collect_garbage.ts";
import { awaitBackground, TimeSlices } from "../util/time_slices.ts";
import { grownSinceTuning } from "../search/vector_plan.ts";

/**
 * How long one batch may hold the event loop. What an insert costs depends on the vectors (several times more for
 * near-random ones than for clustered ones), the graph's size and the machine, so batches are sized from the last
 * one's cost.
 */
const BATCH_MS = 10;
const FIRST_BATCH = 16;
const MAX_BATCH = 512;
/**
 * Vectors that may wait before a write waits for them: every search scans the waiting ones' int8 codes, at a cost that
 * grows with their number, and a snapshot lacks them in its graph.
 */
export const MAX_GRAPH_BACKLOG = 2_048;

/** A running insert task: the writers waiting for its backlog to shrink. */
interface Inserting {
  waiters: (() => void)[];
}

/**
 * A catch-up of at least this many inserts hands back memory afterwards (see `#afterCatchUp`): a full collection
 * after each few small writes would stall the event loop each time, for longer the larger the heap.
 */
const LARGE_CATCH_UP = 16_384;
/** How often paused inserts look again. */
const PAUSE_POLL_MS = 20;

/** The background insert tasks of every index. */
export class GraphInserts {
  readonly #background: BackgroundTasks;
  readonly #allocator: NativeAllocator | undefined;
  readonly #running = new Map<SearchIndex, Inserting>();
  /** Snapshot writes under way, which inserts make way for. */
  #snapshots = 0;

  /** `allocator` hands back the free pages that inserts leave, once a graph has caught up. */
  constructor(background: BackgroundTasks, allocator?: NativeAllocator) {
    this.#background = background;
    this.#allocator = allocator;
  }

  /**
   * Starts adding the waiting vectors of `index`, when enough wait (with `all`, when any do), unless that runs already;
   * it stops early once `wanted` says the index is no longer kept.
   */
  start(name: string, index: SearchIndex, wanted: () => boolean, { all = false } = {}): void {
    if (this.#running.has(index) || !(all ? index.pendingGraphInserts > 0 : index.graphInsertsDue)) return;
    if (!graphFillWanted(index)) return;
    const inserting: Inserting = { waiters: [] };
    this.#running.set(index, inserting);
    this.#background.run(`graph inserts of ${name}`, async () => {
      try {
        const heldBefore = index.graphVectors;
        const paused = () => this.#snapshots > 0 && inserting.waiters.length === 0;
        const whenIdle = () => index.vectorPlan.scan;
        await insertInBatches(index, { wanted: () => wanted() && graphFillWanted(index), whenIdle, paused }, () => {
          if (!backlogMatters(index)) release(inserting);
        });
        const inserted = index.graphVectors - heldBefore;
        if (index.pendingGraphInserts === 0 && inserted >= LARGE_CATCH_UP) await this.#afterCatchUp(index);
      } finally {
        this.#running.delete(index);
        release(inserting);
      }
    });
  }

  /**
   * Adds the waiting vectors of `index` in batches between turns of the event loop, until its graph holds `upTo` (all,
   * by default): for a state read only to be snapshotted, whose graph no one else fills.
   */
  async insertAll(index: SearchIndex, upTo = Infinity): Promise<void> {
    const when = { wanted: () => index.graphVectors < upTo, whenIdle: () => false, paused: () => false };
    await insertInBatches(index, when, () => {});
  }

  /**
   * Runs `write` (a snapshot's) with the background inserts paused, but for those that writers wait for. Inserts that
   * take every free turn hold back a snapshot's store commits: after a restart over many near-random vectors, storing
   * part of a snapshot beside them can take longer than storing all of it without them. Meanwhile the log that the
   * snapshot would cover stays, and a restart replays it, which can take most of a large index's first search.
   */
  async pausedDuring<T>(write: () => Promise<T>): Promise<T> {
    this.#snapshots++;
    try {
      return await write();
    } finally {
      this.#snapshots--;
    }
  }

  /**
   * Hands back what a large catch-up of a graph left: each batch passed its vectors through the C allocator and the JS
   * heap. A snapshot's trim came after most of them while inserts ran beside it; now that they pause for it, a large
   * catch-up after it leaves V8's heap grown and glibc's free pages held. The heap is collected only where the inserts
   * ran while the process was idle (an index whose searches scan), so that no request waits for the collection.
   */
  async #afterCatchUp(index: SearchIndex): Promise<void> {
    if (index.vectorPlan.scan) collectGarbageNow();
    await this.#allocator?.trim();
  }

  /** The vectors waiting for the graphs of the indexes whose inserts run: 0 once every graph has caught up. */
  waiting(): number {
    let total = 0;
    for (const index of this.#running.keys()) total += index.pendingGraphInserts;
    return total;
  }

  /**
   * Resolves once at most {@link MAX_GRAPH_BACKLOG} vectors of `index` wait, or no task is adding them, or searches do
   * without the graph.
   */
  async backlogWithinBound(index: SearchIndex): Promise<void> {
    const inserting = this.#running.get(index);
    if (inserting === undefined || !backlogMatters(index)) return;
    await awaitBackground(new Promise<void>((resolve) => inserting.waiters.push(resolve)));
  }
}

/**
 * Whether the vectors waiting for the graph of `index` should join it: always, but where a tuned plan scans every code.
 * Its graph serves no search, and filling it would load a copy of it into memory (a viewed graph file stays mapped
 * until its first insert): 50 MiB of anonymous memory at 100,000 near-random vectors. It is filled once the index has
 * grown enough to be tuned again, so that the tuning weighs a whole graph (see {@link tuningWaitsForGraph}).
 */
export function graphFillWanted(index: SearchIndex): boolean {
  const plan = index.vectorPlan;
  return !(plan.tunedAt > 0 && plan.scan) || grownSinceTuning(plan, index.passageCount);
}

/** Whether a tuning of `index` is held back until its graph has taken every vector: a scan's, due for its growth. */
export function tuningWaitsForGraph(index: SearchIndex): boolean {
  const plan = index.vectorPlan;
  return plan.scan && grownSinceTuning(plan, index.passageCount) && index.pendingGraphInserts > 0;
}

/**
 * Whether so many vectors wait for the graph of `index` that writers should wait too: only once a tuning has found that
 * its searches use the graph. Not while they scan every code instead, as they do on near-random vectors, where the graph
 * only matters once a retuning finds it cheaper than the scan (it tunes on the vectors the graph holds); nor before the
 * first tuning, which waits for a graph of 10,000 vectors, so that a bulk load does not wait for a graph it may not use.
 */
function backlogMatters(index: SearchIndex): boolean {
  const plan = index.vectorPlan;
  return plan.tunedAt > 0 && !plan.scan && index.pendingGraphInserts > MAX_GRAPH_BACKLOG;
}

/**
 * Adds the vectors waiting for the graph, one batch of about {@link BATCH_MS} per background turn (per idle turn while
 * `whenIdle` says so), while `wanted` says so, and none while `paused` says so. Searches scan the waiting vectors' codes
 * meanwhile, at little extra cost.
 */
async function insertInBatches(
  index: SearchIndex,
  when: { wanted: () => boolean; whenIdle: () => boolean; paused: () => boolean },
  afterBatch: () => void,
): Promise<void> {
  const turns = new TimeSlices(0);
  let batch = FIRST_BATCH;
  while (index.pendingGraphInserts > 0) {
    await turns.next({ whenIdle: when.whenIdle(), giveUp: () => !when.wanted() });
    if (!when.wanted()) return;
    if (when.paused()) {
      await new Promise((resolve) => setTimeout(resolve, PAUSE_POLL_MS));
      continue;
    }
    const count = Math.min(batch, index.pendingGraphInserts);
    const started = performance.now();
    index.flushGraph(count);
    const batchMs = performance.now() - started;
    batch = Math.max(1, Math.min(MAX_BATCH, Math.floor(BATCH_MS * count / Math.max(batchMs, 0.001))));
    afterBatch();
  }
}

function release(inserting: Inserting): void {
  for (const resolve of inserting.waiters.splice(0)) resolve();
}
