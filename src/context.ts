/** What every action needs: storage, the embedder, limits, the per-index write lock, the search indexes, metrics. */
import type { Limits } from "./api/request_schemas.ts";
import type { Embedder } from "./embedding/embedder.ts";
import type { BackgroundTasks } from "./concurrency/background_tasks.ts";
import type { KeyedMutex } from "./concurrency/keyed_mutex.ts";
import type { SnapshotScheduler } from "./search/snapshot_scheduler.ts";
import type { SearchIndexCache } from "./search/search_index_cache.ts";
import type { RecordCache } from "./storage/record_cache.ts";
import type { Metrics } from "./observability/metrics.ts";

/** The shared parts of the running service. */
export interface ServiceContext {
  kv: Deno.Kv;
  embedder: Embedder;
  limits: Limits;
  /** Serialises writes to one index within this process. */
  indexLocks: KeyedMutex;
  snapshots: SnapshotScheduler;
  /** Recently read project and index records, for authentication and `getIndex`. */
  records: RecordCache;
  /** The in-memory search state of recently searched indexes. */
  searchIndexes: SearchIndexCache;
  background: BackgroundTasks;
  /** Request counters and durations, and lost commit races, for `/metrics`. */
  metrics: Metrics;
}

/** The key under which writes to one index are serialised. */
export function indexLockKey(projectId: string, indexName: string): string {
  return JSON.stringify([projectId, indexName]);
}
