/**
 * The one owner of this process's in-memory search state. It keeps recently searched indexes (least recently used
 * out first), loads them from snapshot plus change log, hears of this process's writes to update them in place, and
 * writes snapshots in the background when the log has grown. A search checks currency against the index record it
 * has just read (one KV read), so a current index is never reloaded; a write by another process makes the next search
 * reload.
 */
import type { BackgroundTasks } from "../concurrency/background_tasks.ts";
import type { AnnGraphs } from "../search/ann_graphs.ts";
import type { SearchIndex } from "../search/search_index.ts";
import { encodeSearchSnapshot } from "../search/search_snapshot_codec.ts";
import type { DocChange } from "../storage/doc_records.ts";
import { type IndexRecord, readSettledIndex } from "../storage/index_records.ts";
import { truncateLog } from "../storage/change_log.ts";
import { readSnapshotPointer, writeSnapshot } from "../storage/snapshot_store.ts";
import { type LoadedIndex, loadSearchIndex } from "./load_search_index.ts";
import { type LogState, snapshotDue, SnapshotPolicy } from "./snapshot_policy.ts";

interface CachedIndex {
  /** The revision the state shows once `ready` settles. */
  revision: number;
  ready: Promise<SearchIndex>;
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
  /** Gives large indexes their HNSW graphs; without them, vector search scans exactly. */
  graphs?: AnnGraphs | undefined;
}

/** Search state per index id, loaded on demand, kept current by this process's writes, snapshotted as it grows. */
export class IndexStates {
  readonly #kv: Deno.Kv;
  readonly #background: BackgroundTasks;
  readonly #capacity: number;
  readonly #graphs: AnnGraphs | undefined;
  readonly #entries = new Map<string, CachedIndex>();
  readonly #snapshots = new SnapshotPolicy();

  constructor(kv: Deno.Kv, background: BackgroundTasks, options: IndexStatesOptions) {
    this.#kv = kv;
    this.#background = background;
    this.#capacity = options.capacity;
    this.#graphs = options.graphs;
  }

  /** The search state of `record`'s index at the record's revision or later, loaded only when not cached. */
  get(record: IndexRecord): Promise<SearchIndex> {
    const cached = this.#entries.get(record.id);
    if (cached !== undefined && cached.revision >= record.revision) {
      this.#entries.delete(record.id);
      this.#entries.set(record.id, cached);
      return cached.ready;
    }
    const loading = loadSearchIndex(this.#kv, record, { graphs: this.#graphs }).then((loaded) => {
      this.#noteLoad(record, loaded);
      return loaded.index;
    });
    return this.#store(record.id, record.revision, loading);
  }

  /**
   * Hears of a write this process committed. A cached state at the revision before it is updated in place; any other
   * cached state is dropped, to be reloaded by the next search. The change log's growth may call for a snapshot.
   */
  noteWrite(write: CommittedWrite): void {
    const { before, after, changes, logBytes } = write;
    const cached = this.#entries.get(after.id);
    if (cached !== undefined && cached.revision !== before.revision) this.#entries.delete(after.id);
    else if (cached !== undefined) {
      this.#store(
        after.id,
        after.revision,
        cached.ready.then((index) => {
          index.apply(changes, { revision: after.revision });
          return index;
        }),
      );
    }
    this.#maybeSnapshot(after, this.#snapshots.noteWrite(after.id, logBytes));
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

  #noteLoad(record: IndexRecord, loaded: LoadedIndex): void {
    this.#maybeSnapshot(record, this.#snapshots.noteLoad(record.id, loaded));
    if (loaded.index.pendingGraphInserts > 0) {
      // After the search that caused the load has answered: one turn of the event loop later.
      this.#background.run(`graph inserts of ${record.id}`, async () => {
        await new Promise((resolve) => setTimeout(resolve, 0));
        loaded.index.flushGraph();
      });
    }
  }

  #store(indexId: string, revision: number, ready: Promise<SearchIndex>): Promise<SearchIndex> {
    const entry: CachedIndex = { revision, ready };
    this.#entries.delete(indexId);
    this.#entries.set(indexId, entry);
    // A failed load or update is forgotten, so that the next search loads again.
    ready.catch(() => {
      if (this.#entries.get(indexId) === entry) this.#entries.delete(indexId);
    });
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.#capacity) break;
      this.#entries.delete(oldest);
    }
    return ready;
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
    const entry = await readSettledIndex(this.#kv, address.projectId, address.name);
    if (entry.value?.id !== address.id) return;
    const index = await this.get(entry.value);
    // Encoded in one synchronous step, so that no write can land halfway.
    const bytes = encodeSearchSnapshot(index);
    const revision = index.revision;
    log.logBytes = 0;
    log.snapshotBytes = bytes.byteLength;
    if (await writeSnapshot(this.#kv, address.id, { revision, bytes })) {
      await truncateLog(this.#kv, address.id, revision);
    }
  }
}

/** Whether a write asked for another snapshot while one ran; a function, so that TypeScript rereads the state. */
function rerunRequested(log: LogState): boolean {
  return log.state === "dirty";
}
