/**
 * The one owner of this process's in-memory search state. It keeps recently searched indexes within a memory budget
 * (least recently used out first), loads them from snapshot plus change log, brings a stale one current by replaying
 * the log entries after its revision, updates them in place on this process's writes, and writes snapshots in the
 * background, under a lease in the store so that one process at a time writes an index's snapshot.
 */
import { indexTooLarge } from "../api/index_errors.ts";
import type { BackgroundTasks } from "../concurrency/background_tasks.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { AnnGraphs } from "../search/ann_graphs.ts";
import { EXACT_SEARCH_MAX_VECTORS, type SearchIndex } from "../search/search_index.ts";
import { encodeSearchSnapshot } from "../search/search_snapshot_codec.ts";
import { nextTurn, TimeSlices } from "../util/time_slices.ts";
import type { NativeAllocator } from "../util/native_allocator.ts";
import { collectGarbageNow } from "../util/collect_garbage.ts";
import { GraphInserts } from "./graph_inserts.ts";
import type { DocChange } from "../storage/doc_change_codec.ts";
import { type IndexRecord, readSettledIndex } from "../storage/index_records.ts";
import { LOG_RETENTION_MS, readLogTail, truncateLog } from "../storage/change_log.ts";
import {
  readSnapshotPointer,
  type SnapshotPointer,
  takeSnapshotLease,
  truncatableRevision,
  writeSnapshot,
} from "../storage/snapshot_store.ts";
import { isStoreBusy } from "../storage/store_busy.ts";
import { type LoadedIndex, loadSearchIndex } from "./load_search_index.ts";
import { type LogState, snapshotDue, SnapshotPolicy } from "./snapshot_policy.ts";

interface CachedIndex {
  /** The revision the state shows once `ready` settles. */
  revision: number;
  ready: Promise<SearchIndex>;
  /** The state's estimated memory, once measured. */
  bytes: number;
}

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
}

/** How long a process may take to write a snapshot before another may take its lease. */
const SNAPSHOT_LEASE_MS = 60_000;

/** Search state per index id, loaded on demand, kept current, within a memory budget, snapshotted as it grows. */
export class IndexStates {
  readonly #kv: Deno.Kv;
  readonly #background: BackgroundTasks;
  readonly #options: IndexStatesOptions;
  readonly #entries = new Map<string, CachedIndex>();
  readonly #snapshots = new SnapshotPolicy();
  readonly #graphInserts: GraphInserts;

  constructor(kv: Deno.Kv, background: BackgroundTasks, options: IndexStatesOptions) {
    this.#kv = kv;
    this.#background = background;
    this.#options = options;
    this.#graphInserts = new GraphInserts(background, options.allocator);
  }

  /** The most bytes of search state this process keeps. */
  get budgetBytes(): number {
    return this.#options.budgetBytes;
  }

  /** The estimated bytes of all search state in memory. */
  totalBytes(): number {
    let total = 0;
    for (const entry of this.#entries.values()) total += entry.bytes;
    return total;
  }

  /** Vectors of the indexes in memory that wait for their graphs while background inserts run. */
  graphInsertsWaiting(): number {
    return this.#graphInserts.waiting();
  }

  /** The estimated bytes of one index's search state in memory; 0 when it is not loaded. */
  bytesOf(indexId: string): number {
    return this.#entries.get(indexId)?.bytes ?? 0;
  }

  /**
   * The search state of `record`'s index at the record's revision or later: from memory when current, brought current
   * from the change log when stale, loaded otherwise; 507 when it alone would not fit in the budget.
   */
  async get(record: IndexRecord): Promise<SearchIndex> {
    const cached = this.#entries.get(record.id);
    if (cached !== undefined && cached.revision >= record.revision) {
      this.#touch(record.id, cached);
      const index = await cached.ready;
      // Its recent queries may call for a tuning.
      this.#maybeTune(record.id, index);
      return index;
    }
    const ready = cached === undefined
      ? this.#load(record)
      : cached.ready.then((index) => this.#catchUp(index, record), () => this.#load(record));
    const entry = this.#store(record.id, record.revision, ready);
    const index = await ready;
    this.#measure(record, entry, index);
    return index;
  }

  /**
   * Hears of a write this process committed. A cached state at the revision before it is updated in place; one further
   * behind is left to catch up from the log at its next search. The log's growth may call for a snapshot. Resolves once
   * the vectors waiting for the index's graph are within their bound (see {@link GraphInserts}): a writer that waits for
   * it cannot outrun the graph.
   */
  noteWrite(write: CommittedWrite): Promise<void> {
    const { before, after, changes, logBytes } = write;
    const cached = this.#entries.get(after.id);
    this.#maybeSnapshot(after, this.#snapshots.noteWrite(after.id, logBytes));
    if (cached === undefined || cached.revision !== before.revision) return Promise.resolve();
    const entry = this.#store(
      after.id,
      after.revision,
      cached.ready.then((index) => {
        index.apply(changes, { revision: after.revision, deferGraph: true });
        this.#insertIntoGraph(after.id, index);
        return index;
      }),
    );
    entry.ready.then((index) => this.#measure(after, entry, index)).catch(() => {});
    return entry.ready.then((index) => this.#graphInserts.backlogWithinBound(index), () => {});
  }

  /** Hears of a new index, whose first documents no snapshot holds yet. */
  noteCreated(record: IndexRecord): void {
    this.#maybeSnapshot(record, this.#snapshots.noteWrite(record.id, Infinity));
  }

  /** Forgets an index, e.g. after it was deleted. */
  drop(indexId: string): void {
    this.#entries.delete(indexId);
    this.#snapshots.drop(indexId);
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
    this.#evictFor(pointer?.bytes ?? 0, record.id);
    const loaded = await loadSearchIndex(this.#kv, record, { graphs: this.#options.graphs, pointer });
    this.#options.metrics.countLoad(loaded.snapshotBytes > 0 ? "snapshot" : "full");
    // The chunks read, near the state's size in all, became garbage as they were decoded: what is left of them (and of
    // the C allocator's pages that they held) is handed back once the search that waits has answered.
    if (loaded.snapshotBytes > LARGE_LOAD_BYTES) {
      this.#background.run("collect a read snapshot", async () => {
        await nextTurn();
        collectGarbageNow();
        await this.#options.allocator?.trim();
      });
    }
    return loaded;
  }

  async #load(record: IndexRecord): Promise<SearchIndex> {
    const loaded = await this.#read(record);
    this.#maybeSnapshot(record, this.#snapshots.noteLoad(record.id, loaded));
    if (loaded.index.pendingGraphInserts > 0) this.#insertIntoGraph(record.id, loaded.index, { all: true });
    return loaded.index;
  }

  /** Replays the log entries after the state's revision; loads afresh when the log no longer has them all. */
  async #catchUp(index: SearchIndex, record: IndexRecord): Promise<SearchIndex> {
    if (index.revision >= record.revision) return index;
    const from = index.revision;
    const tail = await readLogTail(this.#kv, record.id, from, record.revision);
    if (tail === null) return await this.#load(record);
    tail.changes.forEach((changes, i) => index.apply(changes, { revision: from + i + 1, deferGraph: true }));
    this.#insertIntoGraph(record.id, index);
    this.#options.metrics.countLoad("catchup");
    this.#maybeSnapshot(record, this.#snapshots.noteWrite(record.id, tail.bytes));
    return index;
  }

  /** Records the state's size, then evicts the least recently used others until all fit; 507 if it cannot fit alone. */
  #measure(record: IndexRecord, entry: CachedIndex, index: SearchIndex): void {
    if (this.#entries.get(record.id) !== entry) return;
    entry.bytes = residentBytes(index);
    if (entry.bytes > this.budgetBytes) {
      this.#entries.delete(record.id);
      this.#options.metrics.countEviction();
      throw indexTooLarge(record.name, entry.bytes, this.budgetBytes);
    }
    this.#evictFor(0, record.id);
    this.#maybeTune(record.id, index);
  }

  /**
   * Tunes how the index finds vector candidates, when it is due: one measured search per turn of the event loop, the
   * first after the request that called for it has been answered, so that requests are answered in between. An index
   * evicted meanwhile is left untuned.
   */
  #maybeTune(indexId: string, index: SearchIndex): void {
    const steps = index.vectorTuning();
    if (steps === undefined) return;
    this.#background.run(
      `tune vector search of ${indexId}`,
      () => tuneInTurns(steps, () => this.#entries.has(indexId)),
    );
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
    if (index.passageCount <= EXACT_SEARCH_MAX_VECTORS || this.#entries.has(address.id)) return;
    if (this.#entries.size >= this.#options.capacity) return;
    const bytes = residentBytes(index);
    if (this.totalBytes() + bytes > this.budgetBytes) return;
    this.#store(address.id, index.revision, Promise.resolve(index)).bytes = bytes;
    this.#insertIntoGraph(address.id, index, { all: true });
    // The writes that landed since it was read are replayed from the log now, so that the next ones apply in place.
    const current = await readSettledIndex(this.#kv, address.projectId, address.name);
    if (current.value?.id === address.id && current.value.revision > index.revision) await this.get(current.value);
  }

  /** Adds the vectors waiting to join the index's graph in the background, when enough wait (with `all`, any). */
  #insertIntoGraph(indexId: string, index: SearchIndex, options: { all?: boolean } = {}): void {
    this.#graphInserts.start(indexId, index, () => this.#entries.has(indexId), options);
  }

  /** Evicts the least recently used states, but `keep`'s, until `incoming` more bytes fit in the budget. */
  #evictFor(incoming: number, keep: string): void {
    let total = this.totalBytes();
    let evicted = false;
    for (const [indexId, other] of this.#entries) {
      if (total + incoming <= this.budgetBytes) break;
      if (indexId === keep) continue;
      this.#entries.delete(indexId);
      total -= other.bytes;
      evicted = true;
      this.#options.metrics.countEviction();
    }
    if (evicted) collectGarbageNow();
  }

  #touch(indexId: string, entry: CachedIndex): void {
    this.#entries.delete(indexId);
    this.#entries.set(indexId, entry);
  }

  #store(indexId: string, revision: number, ready: Promise<SearchIndex>): CachedIndex {
    const entry: CachedIndex = { revision, ready, bytes: this.#entries.get(indexId)?.bytes ?? 0 };
    this.#touch(indexId, entry);
    // A failed load or update is forgotten, so that the next search loads again.
    ready.catch(() => {
      if (this.#entries.get(indexId) === entry) this.#entries.delete(indexId);
    });
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.#options.capacity) break;
      this.#entries.delete(oldest);
    }
    return entry;
  }

  #maybeSnapshot(record: IndexRecord, log: LogState): void {
    if (!snapshotDue(log)) return;
    if (log.state !== undefined) {
      log.state = "dirty";
      return;
    }
    log.state = "running";
    this.#background.run(`snapshot ${record.id}`, async () => {
      try {
        do {
          log.state = "running";
          await this.#snapshot(record, log);
        } while (rerunRequested(log));
      } catch (error) {
        // Another process holds the store's lock: the log stays due, and the next write here tries again.
        if (!isStoreBusy(error)) throw error;
      } finally {
        log.state = undefined;
      }
    });
  }

  async #snapshot(address: IndexRecord, log: LogState): Promise<void> {
    if (log.snapshotBytes === undefined) {
      log.snapshotBytes = (await readSnapshotPointer(this.#kv, address.id))?.bytes ?? 0;
      if (!snapshotDue(log)) return;
    }
    // A state in memory whose graph is far behind (a load that replayed a long log leaves it so) catches up first: a
    // snapshot now would lack what still waits, and would compete with the inserts and with searches for the time.
    const inMemory = await this.#entries.get(address.id)?.ready.catch(() => undefined);
    if (inMemory !== undefined) await this.#graphInserts.backlogWithinBound(inMemory);
    // What the log held before the settled revision is read: writes counted later may lie beyond it.
    const counted = log.logBytes;
    const entry = await readSettledIndex(this.#kv, address.projectId, address.name);
    if (entry.value?.id !== address.id) return;
    // Another process has written it meanwhile (this one loaded before that snapshot was there): reading the index to
    // encode it again would cost its whole size, and could evict what searches here hold, for a swap that is refused.
    const current = await readSnapshotPointer(this.#kv, address.id);
    if (current !== null && current.revision >= entry.value.revision && current.versionId !== log.unreadableVersion) {
      log.snapshotBytes = current.bytes;
      // All of it, when a load without a snapshot counted the log as infinite.
      log.logBytes = log.logBytes === counted ? 0 : log.logBytes - counted;
      return;
    }
    // Another process is writing this snapshot: the log stays due here, so a later write or catch-up tries again,
    // and takes the lease once it has expired if that process died.
    const lease = await takeSnapshotLease(this.#kv, address.id, this.#options.owner, {
      ms: this.#options.snapshotLeaseMs ?? SNAPSHOT_LEASE_MS,
    });
    if (lease === null) return;
    // The state in memory if searches keep it; otherwise read for this snapshot, and kept if it fits beside the others.
    const cached = this.#entries.has(address.id);
    const index = cached ? await this.get(entry.value) : (await this.#read(entry.value)).index;
    if (!cached) {
      await this.#fillGraph(index);
      await this.#keepIfRoom(entry.value, index);
    }
    // A snapshot keeps how the graph is searched, tuned for its size, so that a load searches well from the start.
    await tuneWhenDue(index);
    // Writes that land while the snapshot is encoded and written count towards the next one.
    const covered = log.logBytes;
    log.logBytes = 0;
    // Encoded in slices, between which requests are answered and writes land, and stored as it is encoded, so that its
    // bytes are never held whole: the snapshot shows the state now.
    const slices = new TimeSlices(SNAPSHOT_SLICE_MS, SNAPSHOT_SHARE);
    let written: SnapshotPointer | null = null;
    try {
      written = await this.#graphInserts.pausedDuring(() =>
        writeSnapshot(this.#kv, address.id, {
          revision: index.revision,
          pieces: encodeSearchSnapshot(index, slices),
        }, { lease, pace: () => slices.next(), replaces: log.unreadableVersion })
      );
    } finally {
      if (written === null) log.logBytes += covered;
    }
    if (written === null) return;
    log.snapshotBytes = written.bytes;
    log.unreadableVersion = undefined;
    this.#options.metrics.countSnapshotWritten();
    const truncatable = truncatableRevision(written, Date.now(), LOG_RETENTION_MS);
    if (truncatable > 0) await truncateLog(this.#kv, address.id, truncatable);
    // Encoding and storing a snapshot, and reading the log it covers, passed many buffers through the C allocator.
    await this.#options.allocator?.trim();
  }
}

/**
 * Resident memory per byte that {@link SearchIndex.memoryBytes} estimates: V8's object headers, hidden classes and free
 * space, and the graph's allocator. Measured as the RSS growth of three 20,000-document indexes of the benchmark's
 * corpus (`deno task bench:instances`) against their estimate.
 */
const RESIDENT_PER_ESTIMATED_BYTE = 1.35;

/** The resident memory a state takes, estimated: what the cache's budget counts. */
function residentBytes(index: SearchIndex): number {
  return Math.ceil(index.memoryBytes() * RESIDENT_PER_ESTIMATED_BYTE);
}

/** How long a snapshot's encoding runs before requests get a turn. */
const SNAPSHOT_SLICE_MS = 10;
/**
 * The share of a busy process's time that a snapshot takes: less than other background work, since no request waits
 * for it (the log holds every write until it lands). A bulk load's last snapshot runs on after the load for seconds;
 * at the usual share of a quarter, 8 clients searching meanwhile saw 1.6× their settled p50 on a clustered corpus.
 */
const SNAPSHOT_SHARE = 0.1;

/**
 * A load whose snapshot is larger than this frees the chunks it read at once, where the runtime lets it (see
 * `collectGarbageNow`), and hands back the C allocator's pages they held.
 */
const LARGE_LOAD_BYTES = 16 * 1024 * 1024;

/** Tunes how the index finds vector candidates, if that is due, one measured search per turn of the event loop. */
async function tuneWhenDue(index: SearchIndex): Promise<void> {
  const tuning = index.vectorTuning();
  if (tuning !== undefined) await tuneInTurns(tuning, () => true);
}

/** Runs a tuning's steps one per turn of the event loop (see {@link TimeSlices}), while `wanted` says so. */
async function tuneInTurns(steps: Generator<void>, wanted: () => boolean): Promise<void> {
  const turns = new TimeSlices(0);
  do {
    await turns.next();
    if (!wanted()) {
      steps.return(undefined);
      return;
    }
  } while (!steps.next().done);
}

/** Whether a write asked for another snapshot while one ran; a function, so that TypeScript rereads the state. */
function rerunRequested(log: LogState): boolean {
  return log.state === "dirty";
}
