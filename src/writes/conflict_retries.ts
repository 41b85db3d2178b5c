/** Optimistic writes: read, compute, commit with a check, and try again when another writer got there first. */
import { indexBusy } from "../api/index_errors.ts";
import type { Metrics } from "../observability/metrics.ts";
import { isStoreBusy } from "../storage/store_busy.ts";

/** Attempts before a write gives up; conflicts only come from other processes sharing the store. */
const MAX_ATTEMPTS = 8;

/** The index a write changes, and where its lost races are counted. */
export interface ConflictTarget {
  indexName: string;
  metrics: Metrics;
}

/**
 * Runs `attempt` until it returns a value; `undefined` means its commit lost a race, and so does a store whose lock
 * another process holds. After the last attempt it throws 409 for the index.
 */
export async function retryOnConflict<T>(target: ConflictTarget, attempt: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < MAX_ATTEMPTS; i++) {
    const result = await attempt().catch((error) => {
      if (isStoreBusy(error)) return undefined;
      throw error;
    });
    if (result !== undefined) return result;
    const retried = i + 1 < MAX_ATTEMPTS;
    target.metrics.countConflict(retried);
    if (retried) await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * (i + 1)));
  }
  throw indexBusy(target.indexName);
}
