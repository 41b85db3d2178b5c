/**
 * Writes an index's snapshot in the background once its change log is due for one (see `snapshot_policy.ts`), under a
 * lease in the store so that one process at a time writes it, and truncates the log that the snapshot covers.
 */
import type { BackgroundTasks } from "../concurrency/background_tasks.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { SearchIndex } from "../search/search_index.ts";
import { encodeSearchSnapshot } from "../search/search_snapshot_codec.ts";
import { TimeSlices } from "../util/time_slices.ts";
import type { NativeAllocator } from "../util/native_allocator.ts";
import { type IndexRecord, readSettledIndex } from "../storage/index_records.ts";
import { LOG_RETENTION_MS, truncateLog } from "../storage/change_log.ts";
import {
  readSnapshotPointer,
  type SnapshotPointer,
  takeSnapshotLease,
  truncatableRevision,
  writeSnapshot,
} from "../storage/snapshot_store.ts";
import { isStoreBusy } from "../storage/store_busy.ts";
import type { GraphInserts } from "./graph_inserts.ts";
import { type LogState, snapshotDue, SnapshotPolicy } from "./snapshot_policy.ts";
import { tuneWhenDue } from "./tune_in_turns.ts";
import { copying, type SegmentFiles } from "../segments/segment_files.ts";
import { FileMapper } from "../util/file_mapping.ts";

/** How long a process may take to write a snapshot before another may take its lease. */
const SNAPSHOT_LEASE_MS = 60_000;

/** How long a snapshot's encoding runs before requests get a turn. */
const SNAPSHOT_SLICE_MS = 10;
/**
 * The share of a busy process's time that a snapshot takes: less than other background work, since no request waits
 * for it (the log holds every write until it lands), so that searches during a bulk load's last snapshot slow little.
 */
const SNAPSHOT_SHARE = 0.1;

/** What the snapshot writer asks of the search states in memory. */
export interface SnapshotStates {
  /** The state of an index that searches keep in memory, once ready; undefined when none is kept, or it failed. */
  inMemory(indexId: string): Promise<SearchIndex | undefined>;
  /** The state of `record` to encode: the one in memory if searches keep it, otherwise one read for this snapshot. */
  forSnapshot(record: IndexRecord): Promise<SearchIndex>;
  /** Hears that a snapshot of the index, version `versionId`, was written and its copy kept on this host. */
  copyKept(record: IndexRecord, versionId: string): void;
}

/** Options of {@link SnapshotWriter}. */
export interface SnapshotWriterOptions {
  /** Where written snapshots are counted. */
  metrics: Metrics;
  /** Names this process in snapshot leases. */
  owner: string;
  /** How long a snapshot lease lasts; a writer killed mid-snapshot holds it this long at most. */
  leaseMs?: number | undefined;
  /** Given back the free pages that a snapshot's write leaves, where it can be. */
  allocator?: NativeAllocator | undefined;
  /** This host's copies of snapshots: each snapshot written here is kept there too, once swapped in. */
  segments?: SegmentFiles | undefined;
}

/** Counts each index's log against its snapshot, and writes a new snapshot in the background when one is due. */
export class SnapshotWriter {
  readonly #kv: Deno.Kv;
  readonly #background: BackgroundTasks;
  readonly #options: SnapshotWriterOptions;
  readonly #policy = new SnapshotPolicy();
  readonly #states: SnapshotStates;
  readonly #graphInserts: GraphInserts;

  constructor(
    kv: Deno.Kv,
    parts: { background: BackgroundTasks; states: SnapshotStates; graphInserts: GraphInserts },
    options: SnapshotWriterOptions,
  ) {
    this.#kv = kv;
    this.#background = parts.background;
    this.#states = parts.states;
    this.#graphInserts = parts.graphInserts;
    this.#options = options;
  }

  /** Hears of `logBytes` more in the index's log (infinite for a new index, which has no snapshot yet). */
  noteWrite(record: IndexRecord, logBytes: number): void {
    this.#maybeSnapshot(record, this.#policy.noteWrite(record.id, logBytes));
  }

  /** Hears what a load found: how much log it replayed over a snapshot of what size. */
  noteLoad(
    record: IndexRecord,
    loaded: { logBytes: number; snapshotBytes: number; unreadableVersion?: string | undefined },
  ): void {
    this.#maybeSnapshot(record, this.#policy.noteLoad(record.id, loaded));
  }

  /** Forgets a deleted index. */
  drop(indexId: string): void {
    this.#policy.drop(indexId);
  }

  #maybeSnapshot(record: IndexRecord, log: LogState): void {
    if (!snapshotDue(log)) return;
    if (log.state !== undefined) {
      log.state = "dirty";
      return;
    }
    log.state = "running";
    this.#background.run(`snapshot ${record.id}`, async () => {
      let kept: KeptVersion | undefined;
      try {
        do {
          log.state = "running";
          kept = await this.#snapshot(record, log) ?? kept;
        } while (rerunRequested(log));
      } catch (error) {
        // Another process holds the store's lock: the log stays due, and the next write here tries again.
        if (!isStoreBusy(error)) throw error;
      } finally {
        log.state = undefined;
      }
      // Told once the writing has stopped, of the last version written.
      if (kept !== undefined) this.#states.copyKept(kept.record, kept.versionId);
    });
  }

  /** Whether a snapshot of the index is being written. */
  writing(indexId: string): boolean {
    return this.#policy.writing(indexId);
  }

  /** Writes a snapshot of the index if one is still due; the version written, when its copy was kept here. */
  async #snapshot(address: IndexRecord, log: LogState): Promise<KeptVersion | undefined> {
    if (log.snapshotBytes === undefined) {
      log.snapshotBytes = (await readSnapshotPointer(this.#kv, address.id))?.bytes ?? 0;
      if (!snapshotDue(log)) return;
    }
    // A state in memory whose graph is far behind (a load that replayed a long log leaves it so) catches up first: a
    // snapshot now would lack what still waits, and would compete with the inserts and with searches for the time.
    const inMemory = await this.#states.inMemory(address.id);
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
      ms: this.#options.leaseMs ?? SNAPSHOT_LEASE_MS,
    });
    if (lease === null) return;
    const index = await this.#states.forSnapshot(entry.value);
    // A snapshot keeps how the graph is searched, tuned for its size, so that a load searches well from the start.
    await tuneWhenDue(index);
    // Writes that land while the snapshot is encoded and written count towards the next one.
    const covered = log.logBytes;
    log.logBytes = 0;
    // Encoded in slices, between which requests are answered and writes land, and stored as it is encoded, so that its
    // bytes are never held whole: the snapshot shows the state now.
    const slices = new TimeSlices(SNAPSHOT_SLICE_MS, SNAPSHOT_SHARE);
    let written: SnapshotPointer | null = null;
    let kept = false;
    const copy = await this.#options.segments?.begin(address.id);
    try {
      // Where files can be mapped, the copy takes the rows, codes and graph too, so that a load of it maps them at once.
      const pieces = encodeSearchSnapshot(index, slices, FileMapper.get() === undefined ? undefined : copy);
      written = await this.#graphInserts.pausedDuring(() =>
        writeSnapshot(this.#kv, address.id, {
          revision: index.revision,
          pieces: copy === undefined ? pieces : copying(pieces, copy),
        }, { lease, pace: () => slices.next(), replaces: log.unreadableVersion, logBytes: covered })
      );
      if (written !== null) kept = await copy?.keep(written.versionId, written.bytes) ?? false;
    } finally {
      if (written === null) log.logBytes += covered;
      await copy?.drop();
    }
    if (written === null) return;
    log.snapshotBytes = written.bytes;
    log.unreadableVersion = undefined;
    this.#options.metrics.countSnapshotWritten();
    const truncatable = truncatableRevision(written, Date.now(), LOG_RETENTION_MS);
    if (truncatable > 0) await truncateLog(this.#kv, address.id, truncatable);
    // Encoding and storing a snapshot, and reading the log it covers, passed many buffers through the C allocator.
    await this.#options.allocator?.trim();
    return kept ? { record: entry.value, versionId: written.versionId } : undefined;
  }
}

/** A snapshot version written, whose copy was kept on this host. */
interface KeptVersion {
  record: IndexRecord;
  versionId: string;
}

/** Whether a write asked for another snapshot while one ran; a function, so that TypeScript rereads the state. */
function rerunRequested(log: LogState): boolean {
  return log.state === "dirty";
}
