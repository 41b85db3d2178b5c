/**
 * The one owner of this process's in-memory search state. It keeps recently searched indexes within a memory budget
 * (see `memory_budget.ts`), loads them from snapshot plus change log, brings a stale one current by replaying the log
 * entries after its revision, updates them in place on this process's writes, and hands the log's growth to the
 * snapshot writer (see `snapshot_writer.ts`).
 */
import type { BackgroundTasks } from "../concurrency/background_tasks.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { AnnGraphs } from "../search/ann_graphs.ts";
import type { SearchIndex } from "../search/search_index.ts";
import { EXACT_SEARCH_MAX_VECTORS } from "../search/vector_candidates.ts";
import { nextTurn } from "../util/time_slices.ts";
import type { NativeAllocator } from "../util/native_allocator.ts";
import { collectGarbageNow } from "../util/collect_garbage.ts";
import type { DocChange } from "../storage/doc_change_codec.ts";
import { type IndexRecord, readSettledIndex } from "../storage/index_records.ts";
import { readSnapshotPointer, type SnapshotPointer } from "../storage/snapshot_store.ts";
import { indexTooLarge } from "../api/index_errors.ts";
import { GraphInserts, tuningWaitsForGraph } from "./graph_inserts.ts";
import { type LoadedIndex, type LoadOptions, loadSearchIndex, replayLog } from "./load_search_index.ts";
import type { SegmentFiles } from "../segments/segment_files.ts";
import { type CachedIndex, MemoryBudget, residentBytes } from "./memory_budget.ts";
import { SnapshotWriter } from "./snapshot_writer.ts";
import { MappedSwaps } from "./mapped_swap.ts";
import { FileMapper } from "../util/file_mapping.ts";
import { tuneInTurns, tuneWhenDue } from "./tune_in_turns.ts";

/** A committed document write: the record before and after, the changes, and their size in the change log. */
export interface CommittedWrite {
  before: IndexRecord;
  after: IndexRecord;
  changes: DocChange[];
  logBytes: number;
}

/** Options of {@link IndexStates}. */
export interface IndexStatesOptions {
  /** Most indexes kept in memory. */
  capacity: number;
  /** Most bytes of search state kept in memory (`SEARCH_CACHE_MB`). */
  budgetBytes: number;
  /** Where loads, snapshots and evictions are counted. */
  metrics: Metrics;
  /** Names this process in snapshot leases. */
  owner: string;
  /** Gives large indexes their HNSW graphs; without them, vector search scans exactly. */
  graphs?: AnnGraphs | undefined;
  /** How long a snapshot lease lasts; a writer killed mid-snapshot holds it this long at most. */
  snapshotLeaseMs?: number;
  /** Given back the free pages that a snapshot's load or write leaves, where it can be. */
  allocator?: NativeAllocator | undefined;
  /** This host's copies of snapshots, read at a load and kept as snapshots are read or written. */
  segments?: SegmentFiles | undefined;
}

/** Search state per index id, loaded on demand, kept current, within a memory budget, snapshotted as it grows. */
export class IndexStates {
  readonly #kv: Deno.Kv;
  readonly #background: BackgroundTasks;
  readonly #options: IndexStatesOptions;
  readonly #budget: MemoryBudget;
  readonly #graphInserts: GraphInserts;
  readonly #snapshots: SnapshotWriter;
  readonly #swaps: MappedSwaps;
  /**
   * States the budget let go. Background work on a state (graph inserts, tuning) stops once it is here, even when a
   * later search has loaded the same index again as a new state: otherwise it would keep the old one alive.
   */
  readonly #evicted = new WeakSet<SearchIndex>();
  /** Whether a background release of memory is yet to start (see {@link #releaseSoon}). */
  #releaseDue = false;
  /** Whether the process is closing (see {@link close}). */
  #closing = false;

  constructor(kv: Deno.Kv, background: BackgroundTasks, options: IndexStatesOptions) {
    this.#kv = kv;
    this.#background = background;
    this.#options = options;
    this.#budget = new MemoryBudget(options, options.metrics, (entry) => {
      // A state still loading is let go once it is ready; a failed load holds nothing.
      entry.ready.then((index) => {
        this.#evicted.add(index);
        this.#releaseSoon();
      }, () => {});
    });
    this.#graphInserts = new GraphInserts(background, options.allocator);
    const states = {
      // A state whose load failed is none: that failure is the search's to report.
      inMemory: (indexId: string) =>
        this.#budget.peek(indexId)?.ready.catch(() => undefined) ?? Promise.resolve(undefined),
      forSnapshot: (record: IndexRecord) => this.#forSnapshot(record),
      copyKept: (record: IndexRecord, versionId: string) => this.#swapSoon(record, versionId),
    };
    this.#snapshots = new SnapshotWriter(kv, { background, states, graphInserts: this.#graphInserts }, {
      metrics: options.metrics,
      owner: options.owner,
      leaseMs: options.snapshotLeaseMs,
      allocator: options.allocator,
      segments: options.segments,
    });
    this.#swaps = new MappedSwaps(kv, {
      peek: (indexId) => this.#budget.peek(indexId),
      loadCopy: async (record, pointer) => {
        if (!this.#budget.hasRoomFor(pointer.bytes)) return undefined;
        const loaded = await loadSearchIndex(this.#kv, record, this.#loadOptions(pointer));
        return loaded.local ? loaded.index : undefined;
      },
      replace: (record, index) => {
        this.#options.metrics.countLoad("local");
        const entry = this.#budget.store(record.id, index.revision, Promise.resolve(index));
        this.#measure(record, entry, index);
        this.#insertLoadedIntoGraph(record.id, index);
      },
      snapshotWriting: (indexId) => this.#snapshots.writing(indexId),
      closing: () => this.#closing,
    });
  }

  /** The most bytes of search state this process keeps. */
  get budgetBytes(): number {
    return this.#budget.budgetBytes;
  }

  /** The estimated bytes of all search state in memory. */
  totalBytes(): number {
    return this.#budget.totalBytes();
  }

  /** Vectors of the indexes in memory that wait for their graphs while background inserts run. */
  graphInsertsWaiting(): number {
    return this.#graphInserts.waiting();
  }

  /** The estimated bytes of one index's search state in memory; 0 when it is not loaded. */
  bytesOf(indexId: string): number {
    return this.#budget.peek(indexId)?.bytes ?? 0;
  }

  /**
   * The search state of `record`'s index at the record's revision or later: from memory when current, brought current
   * from the change log when stale, loaded otherwise; 507 when it alone would not fit in the budget.
   */
  async get(record: IndexRecord): Promise<SearchIndex> {
    const cached = this.#budget.peek(record.id);
    if (cached !== undefined && cached.revision >= record.revision) {
      this.#budget.touch(record.id, cached);
      const index = await cached.ready;
      // Its recent queries may call for a tuning.
      this.#maybeTune(record.id, index);
      return index;
    }
    const ready = cached === undefined
      ? this.#load(record)
      : cached.ready.then((index) => this.#catchUp(index, record), () => this.#load(record));
    const entry = this.#budget.store(record.id, record.revision, ready);
    const index = await ready;
    this.#measure(record, entry, index);
    return index;
  }

  /**
   * Which of `ids` the index holds at `record`'s revision, when this process's state of it is at that revision; else
   * undefined. A writer then reads the records of those alone: a bulk load of new documents reads none. A state that
   * has moved past the revision meanwhile is harmless: the writer's commit checks the record, fails, and reads again.
   */
  async heldIds(record: IndexRecord, ids: readonly string[]): Promise<string[] | undefined> {
    const cached = this.#budget.peek(record.id);
    if (cached === undefined || cached.revision !== record.revision) return undefined;
    const index = await cached.ready.catch(() => undefined);
    return index?.revision === record.revision ? ids.filter((id) => index.holds(id)) : undefined;
  }

  /**
   * Hears of a write this process committed. A cached state at the revision before it is updated in place; one further
   * behind is left to catch up from the log at its next search. The log's growth may call for a snapshot. Resolves once
   * the vectors waiting for the index's graph are within their bound (see {@link GraphInserts}): a writer that waits for
   * it cannot outrun the graph.
   */
  noteWrite(write: CommittedWrite): Promise<void> {
    const { before, after, changes, logBytes } = write;
    const cached = this.#budget.peek(after.id);
    this.#snapshots.noteWrite(after, logBytes);
    this.#swaps.noteWrite(after.id);
    if (cached === undefined || cached.revision !== before.revision) return Promise.resolve();
    const entry = this.#budget.store(
      after.id,
      after.revision,
      cached.ready.then((index) => {
        index.apply(changes, { revision: after.revision, deferGraph: true });
        this.#insertIntoGraph(after.id, index);
        return index;
      }),
    );
    // The write is committed whatever happens here: a state that failed to update, or that outgrew the budget, is
    // dropped (see MemoryBudget), and the next search loads it again or answers the 507.
    entry.ready.then((index) => this.#measure(after, entry, index)).catch(() => {});
    // The writer waits for the write before it to be applied here, not for its own: its own is applied while its
    // client sends the next batch, and a search here waits for it (it awaits the state's `ready`). One write at most
    // is acknowledged and not yet applied, so that a fast writer cannot pile changes up in memory.
    return cached.ready.then((index) => this.#graphInserts.backlogWithinBound(index), () => {});
  }

  /** Hears of a new index, whose first documents no snapshot holds yet. */
  noteCreated(record: IndexRecord): void {
    this.#snapshots.noteWrite(record, Infinity);
  }

  /** Forgets an index, e.g. after it was deleted. */
  drop(indexId: string): void {
    this.#budget.delete(indexId);
    this.#snapshots.drop(indexId);
    this.#swaps.drop(indexId);
  }

  /**
   * Swaps the state in memory of a large index, which writes built, for a load of the snapshot just written, whose copy
   * this process kept, once the index goes quiet (see `mapped_swap.ts`): where files can be mapped, that load maps them.
   */
  #swapSoon(record: IndexRecord, versionId: string): void {
    const cached = this.#budget.peek(record.id);
    if (cached === undefined || FileMapper.get() === undefined) return;
    this.#background.run(`swap ${record.id} for its snapshot`, async () => {
      const index = await cached.ready.catch(() => undefined);
      if (index !== undefined && index.passageCount > EXACT_SEARCH_MAX_VECTORS) {
        await this.#swaps.swapWhenQuiet(record, versionId);
      }
    });
  }

  /** Reads an index's search state from the store, without keeping it. */
  async #read(record: IndexRecord): Promise<LoadedIndex> {
    const pointer = await readSnapshotPointer(this.#kv, record.id);
    // A snapshot is near the size of the state it restores (the graph and UTF-8 texts make it larger or smaller):
    // one over twice the budget cannot fit and is not even read.
    if (pointer !== null && pointer.bytes > 2 * this.budgetBytes) {
      throw indexTooLarge(record.name, pointer.bytes, this.budgetBytes);
    }
    // A load builds a state near the snapshot's size, decoding the snapshot as it arrives (its bytes are never held
    // whole): room for the state is made first.
    // What the states evicted for it held is handed back before the load allocates: both at once would pass the budget.
    if (this.#budget.evictFor(pointer?.bytes ?? 0, record.id)) await this.#releaseMemory();
    const loaded = await loadSearchIndex(this.#kv, record, this.#loadOptions(pointer));
    this.#options.metrics.countLoad(loaded.snapshotBytes === 0 ? "full" : loaded.local ? "local" : "snapshot");
    // The chunks read, near the state's size in all, became garbage as they were decoded: what is left of them (and of
    // the C allocator's pages that they held) is handed back once the search that waits has answered.
    if (loaded.snapshotBytes > LARGE_LOAD_BYTES) this.#releaseSoon();
    return loaded;
  }

  async #load(record: IndexRecord): Promise<SearchIndex> {
    const loaded = await this.#read(record);
    this.#snapshots.noteLoad(record, loaded);
    this.#insertLoadedIntoGraph(record.id, loaded.index);
    return loaded.index;
  }

  /** How a load reads `pointer`'s snapshot: with this process's graphs and copies, tracking what it writes after. */
  #loadOptions(pointer: SnapshotPointer | null): LoadOptions {
    const { graphs, segments } = this.#options;
    return { graphs, segments, pointer, track: (writing) => void this.#background.watch(writing) };
  }

  /**
   * Adds the vectors that a loaded state's graph lacks. A graph mapped from a kept file stays mapped while few wait to
   * join it: they are scanned meanwhile, as between writes, and join it with the next write's.
   */
  #insertLoadedIntoGraph(indexId: string, index: SearchIndex): void {
    if (index.pendingGraphInserts > 0) this.#insertIntoGraph(indexId, index, { all: !index.graphMapped });
  }

  /** Replays the log entries after the state's revision; loads afresh when the log no longer has them all. */
  async #catchUp(index: SearchIndex, record: IndexRecord): Promise<SearchIndex> {
    if (index.revision >= record.revision) return index;
    const logBytes = await replayLog(this.#kv, record.id, index, record.revision);
    if (logBytes === null) return await this.#load(record);
    this.#insertIntoGraph(record.id, index);
    this.#options.metrics.countLoad("catchup");
    this.#snapshots.noteWrite(record, logBytes);
    return index;
  }

  /** Records the state's size within the budget (507 if it cannot fit alone), then tunes it if that is due. */
  #measure(record: IndexRecord, entry: CachedIndex, index: SearchIndex): void {
    if (this.#budget.measure(record, entry, index)) this.#maybeTune(record.id, index);
  }

  /**
   * Tunes how the index finds vector candidates, when it is due: one measured search per turn of the event loop, the
   * first after the request that called for it has been answered, so that requests are answered in between. An index
   * evicted meanwhile is left untuned.
   */
  #maybeTune(indexId: string, index: SearchIndex): void {
    if (tuningWaitsForGraph(index)) return;
    const steps = index.vectorTuning();
    if (steps === undefined) return;
    this.#background.run(`tune vector search of ${indexId}`, async () => {
      await tuneInTurns(steps, this.#kept(indexId, index));
      // A tuning that chose the graph sets the vectors that wait going into it, once enough wait to be worth loading a
      // viewed graph for (none go into a scan's graph).
      this.#insertIntoGraph(indexId, index);
    });
  }

  /**
   * The state to snapshot: the one in memory if searches keep it; otherwise one read for this snapshot, its graph
   * filled, and kept if it fits beside the others.
   */
  async #forSnapshot(record: IndexRecord): Promise<SearchIndex> {
    if (this.#budget.has(record.id)) return await this.get(record);
    const index = (await this.#read(record)).index;
    await this.#fillGraph(index);
    await this.#keepIfRoom(record, index);
    return index;
  }

  /**
   * Fills the graph of a state read only for a snapshot, which no one else fills: its load left the documents that it
   * replayed from the log waiting, and no snapshot would ever hold them in its graph. They go in in batches between
   * requests: first enough to tune on, then the rest (and the plan is tuned again on the whole graph once it has grown
   * by half), unless the tuned plan scans every code instead of searching the graph (near-random vectors). Then the
   * graph waits for an idle process, and the snapshot holds it as it is.
   */
  async #fillGraph(index: SearchIndex): Promise<void> {
    await this.#graphInserts.insertAll(index, EXACT_SEARCH_MAX_VECTORS);
    await tuneWhenDue(index);
    if (!index.vectorPlan.scan) await this.#graphInserts.insertAll(index);
  }

  /**
   * Keeps a state read for a snapshot in memory when it has a graph (a smaller one reads in milliseconds) and fits in
   * the budget beside the others, evicting none. The writes that follow then update it in place rather than each
   * snapshot reading it again, and its graph keeps pace with them (see {@link noteWrite}): a bulk load leaves a state
   * that searches at once, its graph caught up.
   */
  async #keepIfRoom(address: IndexRecord, index: SearchIndex): Promise<void> {
    if (index.passageCount <= EXACT_SEARCH_MAX_VECTORS || this.#budget.has(address.id)) return;
    const bytes = residentBytes(index);
    if (!this.#budget.hasRoomFor(bytes)) return;
    this.#budget.store(address.id, index.revision, Promise.resolve(index)).bytes = bytes;
    this.#insertIntoGraph(address.id, index, { all: true });
    // The writes that landed since it was read are replayed from the log now, so that the next ones apply in place.
    const current = await readSettledIndex(this.#kv, address.projectId, address.name);
    if (current.value?.id === address.id && current.value.revision > index.revision) await this.get(current.value);
  }

  /** Adds the vectors waiting to join the index's graph in the background, when enough wait (with `all`, any). */
  #insertIntoGraph(indexId: string, index: SearchIndex, options: { all?: boolean } = {}): void {
    this.#graphInserts.start(indexId, index, this.#kept(indexId, index), options);
  }

  /**
   * Hands back the memory that evicted states and read snapshots leave, once their background work has let go of them
   * (an insert waiting for an idle turn looks again within {@link RELEASE_AFTER_MS}): a full collection, then, once
   * the finalizers it queued have run (USearch's graphs, the scan helper's shared memories), the C allocator's free
   * pages.
   */
  async #releaseMemory(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, RELEASE_AFTER_MS));
    // This release covers whatever let go before it, so that none waits to start.
    this.#releaseDue = false;
    collectGarbageNow();
    await nextTurn();
    await this.#options.allocator?.trim();
  }

  /** Runs {@link #releaseMemory} in the background, unless one waits to start: it covers whatever came before it. */
  #releaseSoon(): void {
    if (this.#releaseDue) return;
    this.#releaseDue = true;
    this.#background.run("release evicted and read memory", () => this.#releaseMemory());
  }

  /**
   * Stops the graph inserts under way at their next batch, for a process that is closing: they would otherwise run on
   * while it waits for its background work, for minutes over a large backlog. Snapshot writes run to their end.
   */
  close(): void {
    this.#closing = true;
  }

  /**
   * Whether the budget still keeps `index` as the state of `indexId` (not evicted, nor replaced by a reload), in a
   * process that is not closing.
   */
  #kept(indexId: string, index: SearchIndex): () => boolean {
    return () => !this.#closing && this.#budget.has(indexId) && !this.#evicted.has(index);
  }
}

/**
 * A load whose snapshot is larger than this frees the chunks it read at once, where the runtime lets it (see
 * `collectGarbageNow`), and hands back the C allocator's pages they held.
 */
const LARGE_LOAD_BYTES = 16 * 1024 * 1024;
/** How long after an eviction or a large load its memory is collected: background work on the state lets go first. */
const RELEASE_AFTER_MS = 50;
