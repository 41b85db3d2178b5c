/**
 * When an index gets a fresh snapshot. Writes only append to the change log; once the log since the last snapshot
 * outgrows a tenth of the snapshot (and at least 1 MiB), the in-memory search state is encoded as the new snapshot and
 * the covered log can go. A snapshot thus costs O(index) only after O(index) bytes of writes, and each write pays
 * O(its changes). Pure bookkeeping: `SnapshotWriter` does the writing.
 */

/** Log bytes that always justify a snapshot, however small the index. */
const MIN_LOG_BYTES = 1024 * 1024;
/**
 * The log may grow to this share of the snapshot's size before a new snapshot replaces both: a load replays at most
 * this much, and a snapshot is rewritten once per this much growth.
 */
const LOG_SHARE = 0.1;

/** What is known of one index's log and snapshot. */
export interface LogState {
  logBytes: number;
  /** The current snapshot's size: 0 when there is none, undefined until read. */
  snapshotBytes?: number;
  /** The version of the current snapshot when it could not be read: the next snapshot replaces it. */
  unreadableVersion?: string | undefined;
  /** A snapshot is being written (`running`), and another was asked for meanwhile (`dirty`). */
  state?: "running" | "dirty";
}

/** Tracks each index's log size against its snapshot's. */
export class SnapshotPolicy {
  readonly #logs = new Map<string, LogState>();

  /** Notes a write of `logBytes` encoded changes (infinite for a new index, which has no snapshot yet). */
  noteWrite(indexId: string, logBytes: number): LogState {
    const log = this.#log(indexId);
    log.logBytes += logBytes;
    return log;
  }

  /** Notes what a load found: how much log it replayed over a snapshot of what size. */
  noteLoad(
    indexId: string,
    loaded: { logBytes: number; snapshotBytes: number; unreadableVersion?: string | undefined },
  ): LogState {
    const log = this.#log(indexId);
    log.logBytes = loaded.logBytes;
    log.snapshotBytes = loaded.snapshotBytes;
    log.unreadableVersion = loaded.unreadableVersion;
    return log;
  }

  /** Forgets a deleted index. */
  drop(indexId: string): void {
    this.#logs.delete(indexId);
  }

  /** Whether a snapshot of the index is being written. */
  writing(indexId: string): boolean {
    return this.#logs.get(indexId)?.state !== undefined;
  }

  #log(indexId: string): LogState {
    let log = this.#logs.get(indexId);
    if (log === undefined) this.#logs.set(indexId, log = { logBytes: 0 });
    return log;
  }
}

/** Whether the log has outgrown the snapshot; an unknown snapshot size counts as the smallest. */
export function snapshotDue(log: LogState): boolean {
  if (log.snapshotBytes === 0) return log.logBytes > 0;
  return log.logBytes >= Math.max(MIN_LOG_BYTES, (log.snapshotBytes ?? 0) * LOG_SHARE);
}
