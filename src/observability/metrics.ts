/** The service's counters and request-duration histograms, kept in memory and read at each `/metrics` scrape. */

/** Upper bounds, in seconds, of the request-duration histogram buckets. */
export const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** The durations of one action's requests: a count per bucket (not cumulative), their sum and count. */
export interface DurationHistogram {
  /** `buckets[i]` counts durations in (`DURATION_BUCKETS[i - 1]`, `DURATION_BUCKETS[i]`]; the last one, above all. */
  buckets: number[];
  sum: number;
  count: number;
}

/**
 * How search state came into memory: from a snapshot (with any log since) read from the store or from this host's copy
 * of it (`local`), by replaying the log onto a stale cached
 * state (`catchup`), or by reading every document record (`full`).
 */
export type LoadKind = "snapshot" | "local" | "catchup" | "full";

/** The kinds of load, in the order metrics list them. */
export const LOAD_KINDS: readonly LoadKind[] = ["snapshot", "local", "catchup", "full"];

/** How a webhook delivery attempt ended: delivered, failed (to be retried), or given up after its last try. */
export type WebhookResult = "ok" | "failed" | "given_up";

/** The webhook results, in the order metrics list them. */
export const WEBHOOK_RESULTS: readonly WebhookResult[] = ["ok", "failed", "given_up"];

/** Counters of the running service. */
export class Metrics {
  /** Requests by action, then by status. */
  readonly #requests = new Map<string, Map<number, number>>();
  readonly #durations = new Map<string, DurationHistogram>();
  #conflicts = 0;
  #retries = 0;
  #authFailures = 0;
  readonly #rateLimited = new Map<string, number>();
  readonly #loads = new Map<LoadKind, number>();
  #snapshotsWritten = 0;
  readonly #backups = { ok: 0, failed: 0 };
  #lastBackupSuccess: number | undefined;
  #evictions = 0;
  #jobsTakenOver = 0;
  readonly #webhooks = new Map<WebhookResult, number>();

  /** Counts an answered request and its duration. `action` must come from a small fixed set: it becomes a label. */
  observeRequest(action: string, status: number, seconds: number): void {
    let byStatus = this.#requests.get(action);
    if (byStatus === undefined) this.#requests.set(action, byStatus = new Map());
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
    let histogram = this.#durations.get(action);
    if (histogram === undefined) {
      this.#durations.set(
        action,
        histogram = { buckets: new Array(DURATION_BUCKETS.length + 1).fill(0), sum: 0, count: 0 },
      );
    }
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]!) bucket++;
    histogram.buckets[bucket]!++;
    histogram.sum += seconds;
    histogram.count++;
  }

  /** Counts a KV commit that lost an optimistic race, and whether the write is tried again. */
  countConflict(retried: boolean): void {
    this.#conflicts++;
    if (retried) this.#retries++;
  }

  /** Counts a request refused for its project or key; returns the count so far. */
  countAuthFailure(): number {
    return ++this.#authFailures;
  }

  /** Requests refused for their project or key. */
  authFailures(): number {
    return this.#authFailures;
  }

  /** Counts a request refused (429) for passing its key's rate. */
  countRateLimited(keyId: string): void {
    this.#rateLimited.set(keyId, (this.#rateLimited.get(keyId) ?? 0) + 1);
  }

  /** Requests refused for passing their key's rate, by key id. */
  rateLimited(): ReadonlyMap<string, number> {
    return this.#rateLimited;
  }

  /** Counts a load of an index's search state into memory, by how it was loaded. */
  countLoad(kind: LoadKind): void {
    this.#loads.set(kind, (this.#loads.get(kind) ?? 0) + 1);
  }

  /** Loads of search state by kind. */
  loads(): ReadonlyMap<LoadKind, number> {
    return this.#loads;
  }

  /** Counts a snapshot this process wrote and swapped in. */
  countSnapshotWritten(): void {
    this.#snapshotsWritten++;
  }

  /** Snapshots this process wrote. */
  snapshotsWritten(): number {
    return this.#snapshotsWritten;
  }

  /** Counts a scheduled backup this process wrote (`ok`) or tried and failed to write. */
  countBackup(result: "ok" | "failed"): void {
    this.#backups[result]++;
  }

  /** Scheduled backups this process wrote or failed to write. */
  backups(): Readonly<{ ok: number; failed: number }> {
    return this.#backups;
  }

  /** Notes when the store's last backup that was written whole began (by any instance), in ms since the epoch. */
  setLastBackupSuccess(at: number): void {
    this.#lastBackupSuccess = at;
  }

  /** When the store's last whole backup began, as this process last read it; undefined before it knows of one. */
  lastBackupSuccess(): number | undefined {
    return this.#lastBackupSuccess;
  }

  /** Counts an index's search state dropped from memory to stay within the budget. */
  countEviction(): void {
    this.#evictions++;
  }

  /** Indexes dropped from memory to stay within the budget. */
  evictions(): number {
    return this.#evictions;
  }

  /** Counts a queued job this process took over from a runner whose lease expired. */
  countJobTakenOver(): void {
    this.#jobsTakenOver++;
  }

  /** Queued jobs taken over from dead runners. */
  jobsTakenOver(): number {
    return this.#jobsTakenOver;
  }

  /** Counts a webhook delivery attempt of this process by how it ended. */
  countWebhook(result: WebhookResult): void {
    this.#webhooks.set(result, (this.#webhooks.get(result) ?? 0) + 1);
  }

  /** Webhook delivery attempts of this process by how they ended. */
  webhooks(): ReadonlyMap<WebhookResult, number> {
    return this.#webhooks;
  }

  /** Requests by action and status. */
  requests(): ReadonlyMap<string, ReadonlyMap<number, number>> {
    return this.#requests;
  }

  /** Request durations by action. */
  durations(): ReadonlyMap<string, Readonly<DurationHistogram>> {
    return this.#durations;
  }

  /** KV commits that lost a race, and the tries that followed them. */
  conflicts(): { conflicts: number; retries: number } {
    return { conflicts: this.#conflicts, retries: this.#retries };
  }
}
