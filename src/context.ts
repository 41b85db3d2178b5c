/** What every action needs: storage, the embedder, limits, the per-index write lock, the search state, metrics. */
import type { Limits } from "./api/request_schemas.ts";
import type { Embedder } from "./embedding/embedder.ts";
import type { BackgroundTasks } from "./concurrency/background_tasks.ts";
import type { KeyedMutex } from "./concurrency/keyed_mutex.ts";
import type { IndexStates } from "./index_state/index_states.ts";
import type { IndexSettingsCache } from "./index_state/index_settings.ts";
import type { RecordCache } from "./storage/record_cache.ts";
import type { Metrics } from "./observability/metrics.ts";
import type { SearchRecorder } from "./analytics/search_recorder.ts";

/** The shared parts of the running service. */
export interface ServiceContext {
  kv: Deno.Kv;
  embedder: Embedder;
  limits: Limits;
  /** Serialises writes to one index within this process. */
  indexLocks: KeyedMutex;
  /** Recently read project and index records, for authentication and `getIndex`. */
  records: RecordCache;
  /** The in-memory search state of recently searched indexes, and their snapshots. */
  indexStates: IndexStates;
  /** The settings (synonyms, pins) of the indexes it searches, read and compiled once per version. */
  settings: IndexSettingsCache;
  background: BackgroundTasks;
  /** Request counters and durations, lost commit races and refused keys, for `/metrics`. */
  metrics: Metrics;
  /** Which instance this is: its process number on the host (1 unless `PROCESSES` started several) and a unique id. */
  instance: InstanceIdentity;
  /** `WEBHOOK_ALLOWED_HOSTS`: the hosts (`host` or `host:port`, normalized) that webhooks may go to; none when empty. */
  webhookHosts: readonly string[];
  /** `UNDO_WINDOW`: how long `restoreIndex` can bring back a deleted index, in milliseconds (0: not at all). */
  undoWindowMs: number;
  /** Counts searches and clicks for `searchAnalytics`; absent when `ANALYTICS=false`. */
  analytics?: SearchRecorder | undefined;
  /** `ANALYTICS_DAYS`: how many UTC days of search analytics are kept, today included. */
  analyticsDays: number;
}

/** How an instance names itself in health answers, metrics, and the leases it takes in the store. */
export interface InstanceIdentity {
  /** 1 to `PROCESSES`. */
  process: number;
  pid: number;
  /** Unique among all instances ever started over the store. */
  id: string;
}
