/**
 * Decides when an index gets a fresh snapshot, and writes it in the background. Writes only append to the change
 * log; once the log since the last snapshot outgrows a tenth of the snapshot (and at least 1 MiB), the in-memory
 * search state is encoded as the new snapshot and the covered log is deleted. A snapshot thus costs O(index) only
 * after O(index) bytes of writes, and each write pays O(its changes).
 */
import type { BackgroundTasks } from "../concurrency/background_tasks.ts";
import { readSettledIndex } from "../storage/index_records.ts";
import { truncateLog } from "../storage/change_log.ts";
import { readSnapshotPointer, writeSnapshot } from "../storage/snapshot_store.ts";
import type { LoadedIndex } from "./load_search_index.ts";
import type { SearchIndexCache } from "./search_index_cache.ts";
import { encodeSearchSnapshot } from "./search_snapshot_codec.ts";

/** Log bytes that always justify a snapshot, however small the index. */
const MIN_LOG_BYTES = 1024 * 1024;
/**
 * The log may grow to this share of the snapshot's size before a new snapshot replaces both: a load replays at most
 * this much, and a snapshot is rewritten once per this much growth.
 */
const LOG_SHARE = 0.1;

/** Where an index is, so that the background task can find it by name. */
export interface IndexAddress {
  projectId: string;
  indexName: string;
  indexId: string;
}

interface LogState {
  logBytes: number;
  /** The current snapshot's size: 0 when there is none, undefined until read. */
  snapshotBytes?: number;
  state?: "running" | "dirty";
}

/** Tracks each index's log size and snapshots the index once the log is large. */
export class SnapshotScheduler {
  readonly #kv: Deno.Kv;
  readonly #tasks: BackgroundTasks;
  readonly #cache: () => SearchIndexCache;
  readonly #logs = new Map<string, LogState>();

  /** `cache` gives the search state to encode; a function, because the cache and scheduler refer to each other. */
  constructor(kv: Deno.Kv, tasks: BackgroundTasks, cache: () => SearchIndexCache) {
    this.#kv = kv;
    this.#tasks = tasks;
    this.#cache = cache;
  }

  /** Notes a write of `logBytes` encoded changes (infinite for a new index, which has no snapshot yet). */
  noteWrite(address: IndexAddress, logBytes: number): void {
    const log = this.#log(address.indexId);
    log.logBytes += logBytes;
    this.#maybeSnapshot(address, log);
  }

  /** Notes what a load found: how much log it replayed over a snapshot of what size. */
  noteLoad(address: IndexAddress, loaded: LoadedIndex): void {
    const log = this.#log(address.indexId);
    log.logBytes = loaded.logBytes;
    log.snapshotBytes = loaded.snapshotBytes;
    this.#maybeSnapshot(address, log);
  }

  /** Forgets a deleted index. */
  drop(indexId: string): void {
    this.#logs.delete(indexId);
  }

  #log(indexId: string): LogState {
    let log = this.#logs.get(indexId);
    if (log === undefined) this.#logs.set(indexId, log = { logBytes: 0 });
    return log;
  }

  /** Whether the log has outgrown the snapshot; an unknown snapshot size counts as the smallest. */
  #due(log: LogState): boolean {
    if (log.snapshotBytes === 0) return log.logBytes > 0;
    return log.logBytes >= Math.max(MIN_LOG_BYTES, (log.snapshotBytes ?? 0) * LOG_SHARE);
  }

  #maybeSnapshot(address: IndexAddress, log: LogState): void {
    if (!this.#due(log)) return;
    if (log.state !== undefined) {
      log.state = "dirty";
      return;
    }
    log.state = "running";
    this.#tasks.run(`snapshot ${address.indexId}`, async () => {
      try {
        do {
          log.state = "running";
          await this.#snapshot(address, log);
        } while (rerunRequested(log));
      } finally {
        log.state = undefined;
      }
    });
  }

  async #snapshot(address: IndexAddress, log: LogState): Promise<void> {
    if (log.snapshotBytes === undefined) {
      log.snapshotBytes = (await readSnapshotPointer(this.#kv, address.indexId))?.bytes ?? 0;
      if (!this.#due(log)) return;
    }
    const entry = await readSettledIndex(this.#kv, address.projectId, address.indexName);
    if (entry.value?.id !== address.indexId) return;
    const index = await this.#cache().get(entry.value);
    // Encoded in one synchronous step, so that no write can land halfway.
    const bytes = encodeSearchSnapshot(index);
    const revision = index.revision;
    log.logBytes = 0;
    log.snapshotBytes = bytes.byteLength;
    if (await writeSnapshot(this.#kv, address.indexId, { revision, bytes })) {
      await truncateLog(this.#kv, address.indexId, revision);
    }
  }
}

/** Whether a write asked for another snapshot while one ran; a function, so that TypeScript rereads the state. */
function rerunRequested(log: LogState): boolean {
  return log.state === "dirty";
}
