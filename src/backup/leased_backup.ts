/**
 * One backup written under the store's backup lease, so that however many instances (and CLI runs) share a store, one
 * writes at a time. The lease is renewed while the backup runs; a writer that loses it stops. The outcome is recorded
 * in the store with the lease's release, so that every instance knows when the next backup is due.
 */
import {
  type BackupLease,
  finishBackup,
  readBackupState,
  releaseBackupLease,
  renewBackupLease,
  takeBackupLease,
} from "../storage/backup_lease.ts";
import { type BackupOptions, writeBackup, type WrittenBackup } from "./write_backup.ts";

/** How long a lease lasts unrenewed: a writer killed mid-backup holds the next one back this long at most. */
export function backupLeaseMs(intervalMs: number): number {
  return Math.min(60_000, Math.max(5_000, intervalMs));
}

/** How often a lease is looked for while another writer holds it. */
const LEASE_POLL_MS = 500;

/** Options of {@link backupUnderLease}. */
export interface LeasedBackupOptions extends BackupOptions {
  /** Who takes the lease: an instance id, or the CLI's. */
  owner: string;
  leaseMs: number;
  /** Write only when no backup was tried within this many milliseconds (a scheduled backup's interval). */
  dueAfterMs?: number;
  /** How long to wait for a lease that another writer holds; not at all by default. */
  waitForLeaseMs?: number;
}

/**
 * Takes the lease and writes one backup into `dir`; null when another writer holds the lease (for longer than
 * `waitForLeaseMs`) or the backup is not due. A failure is recorded in the store, unless `signal` stopped the backup.
 */
export async function backupUnderLease(
  kv: Deno.Kv,
  dir: string,
  options: LeasedBackupOptions,
): Promise<WrittenBackup | null> {
  const giveUpAt = Date.now() + (options.waitForLeaseMs ?? 0);
  let lease = await takeBackupLease(kv, options.owner, { ms: options.leaseMs });
  while (lease === null && Date.now() < giveUpAt) {
    await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS));
    options.signal?.throwIfAborted();
    lease = await takeBackupLease(kv, options.owner, { ms: options.leaseMs });
  }
  if (lease === null) return null;
  if (options.dueAfterMs !== undefined) {
    const state = await readBackupState(kv);
    if (state !== null && Date.now() < state.attemptedAt + options.dueAfterMs) {
      await releaseBackupLease(kv, lease);
      return null;
    }
  }
  const keeper = new LeaseKeeper(kv, lease, options.leaseMs, options.signal);
  const startedAt = options.now ?? new Date();
  try {
    const written = await writeBackup(kv, dir, { ...options, now: startedAt, signal: keeper.signal });
    const at = startedAt.getTime();
    await finishBackup(kv, await keeper.stop(), { attemptedAt: at, succeededAt: at, name: written.name });
    return written;
  } catch (error) {
    const current = await keeper.stop();
    if (options.signal?.aborted) await releaseBackupLease(kv, current);
    else await finishBackup(kv, current, { attemptedAt: startedAt.getTime(), error: (error as Error).message });
    throw error;
  }
}

/** Renews a lease a third of its time at a time until stopped; aborts its signal once the lease is lost. */
class LeaseKeeper {
  readonly #controller = new AbortController();
  readonly #timer: ReturnType<typeof setInterval>;
  readonly #outer: AbortSignal | undefined;
  readonly #onOuterAbort = () => this.#controller.abort(this.#outer?.reason);
  #current: Deno.KvEntry<BackupLease>;
  #renewing: Promise<void> = Promise.resolve();

  constructor(kv: Deno.Kv, lease: Deno.KvEntry<BackupLease>, ms: number, outer?: AbortSignal) {
    this.#current = lease;
    this.#outer = outer;
    outer?.addEventListener("abort", this.#onOuterAbort);
    if (outer?.aborted) this.#onOuterAbort();
    this.#timer = setInterval(() => {
      this.#renewing = this.#renewing.then(async () => {
        const renewed = await renewBackupLease(kv, this.#current, ms).catch(() => null);
        if (renewed !== null) this.#current = renewed;
        else this.#controller.abort(new Error("The backup lease was lost to another writer"));
      });
    }, ms / 3);
  }

  /** Stops the backup once aborted by the caller or on losing the lease. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Stops renewing; returns the lease as last renewed. */
  async stop(): Promise<Deno.KvEntry<BackupLease>> {
    clearInterval(this.#timer);
    this.#outer?.removeEventListener("abort", this.#onOuterAbort);
    await this.#renewing;
    return this.#current;
  }
}
