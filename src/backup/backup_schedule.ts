/**
 * Scheduled backups (`BACKUP_DIR`, `BACKUP_INTERVAL`, `BACKUP_KEEP`): every instance looks every so often whether a
 * backup is due, and the one that takes the lease writes it. A failed backup is logged and counted, and tried again an
 * interval later; it never stops the server.
 */
import type { Metrics } from "../observability/metrics.ts";
import { readBackupState } from "../storage/backup_lease.ts";
import { TimeSlices } from "../util/time_slices.ts";
import { backupLeaseMs, backupUnderLease } from "./leased_backup.ts";

/** Where and how often to back up, and how many backups to keep. */
export interface BackupSettings {
  dir: string;
  intervalMs: number;
  keep: number;
}

/** Time a backup's reads take before requests get a turn, and its share of a busy process's time. */
const BACKUP_SLICE_MS = 10;
const BACKUP_SHARE = 0.25;

/** How often an instance looks whether a backup is due: a tenth of the interval, within 250 ms and a minute. */
function checkEveryMs(intervalMs: number): number {
  return Math.min(60_000, Math.max(250, Math.floor(intervalMs / 10)));
}

/** Runs scheduled backups for one instance until stopped. */
export class BackupScheduler {
  readonly #kv: Deno.Kv;
  readonly #settings: BackupSettings;
  readonly #owner: string;
  readonly #metrics: Metrics;
  readonly #abort = new AbortController();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<void> | undefined;

  constructor(kv: Deno.Kv, settings: BackupSettings, options: { owner: string; metrics: Metrics }) {
    this.#kv = kv;
    this.#settings = settings;
    this.#owner = options.owner;
    this.#metrics = options.metrics;
  }

  /** Looks at once whether a backup is due, then every so often. */
  start(): void {
    this.#schedule(0);
  }

  /** Stops looking, stops a backup under way (which deletes what it wrote) and waits for it. */
  async stop(): Promise<void> {
    this.#abort.abort(new Error("The server is shutting down"));
    clearTimeout(this.#timer);
    await this.#running;
  }

  #schedule(ms: number): void {
    if (this.#abort.signal.aborted) return;
    this.#timer = setTimeout(() => {
      this.#running = this.#check().finally(() => {
        this.#running = undefined;
        this.#schedule(checkEveryMs(this.#settings.intervalMs));
      });
    }, ms);
  }

  async #check(): Promise<void> {
    const { dir, intervalMs, keep } = this.#settings;
    try {
      const state = await readBackupState(this.#kv);
      if (state?.succeededAt !== undefined) this.#metrics.setLastBackupSuccess(state.succeededAt);
      if (state !== null && Date.now() < state.attemptedAt + intervalMs) return;
      const slices = new TimeSlices(BACKUP_SLICE_MS, BACKUP_SHARE);
      const written = await backupUnderLease(this.#kv, dir, {
        owner: this.#owner,
        leaseMs: backupLeaseMs(intervalMs),
        dueAfterMs: intervalMs,
        keep,
        signal: this.#abort.signal,
        pace: () => slices.next(),
      });
      if (written === null) return;
      this.#metrics.countBackup("ok");
      this.#metrics.setLastBackupSuccess(Date.parse(written.manifest.createdAt));
      console.log(`Backup written: ${written.path}`);
    } catch (error) {
      if (this.#abort.signal.aborted) return;
      this.#metrics.countBackup("failed");
      console.error(`Backup into "${dir}" failed (tried again at the next interval):`, error);
    }
  }
}
