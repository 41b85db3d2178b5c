/** Starts the HTTP service over an open store and embedder, and stops it cleanly. */
import { type Config, limitsOf } from "./config.ts";
import type { InstanceIdentity, ServiceContext } from "./context.ts";
import type { Embedder } from "./embedding/embedder.ts";
import { BackgroundTasks } from "./concurrency/background_tasks.ts";
import { RateLimiter } from "./keys/rate_limiter.ts";
import { upgradeStoreFormat } from "./storage/store_format.ts";
import { IdempotentRequests } from "./idempotency/idempotent_requests.ts";
import { KeyedMutex } from "./concurrency/keyed_mutex.ts";
import { loadAnnGraphs } from "./search/ann_graphs.ts";
import { IndexStates } from "./index_state/index_states.ts";
import { searchCacheBudgetBytes } from "./index_state/memory_budget.ts";
import { RecordCache } from "./storage/record_cache.ts";
import { collectGarbage } from "./storage/garbage_collector.ts";
import { LOG_RETENTION_MS } from "./storage/change_log.ts";
import { BodyDeadlines } from "./http/body_chunks.ts";
import { DEFAULT_MODEL_ID } from "./embedding/model_registry.ts";
import { createServiceHandler } from "./http/service_handler.ts";
import { corsPolicyOf } from "./http/cors.ts";
import { Metrics } from "./observability/metrics.ts";
import { RequestLog } from "./observability/request_log.ts";
import { listenForJobs } from "./storage/job_docs.ts";
import { JobRunner } from "./jobs/job_runner.ts";
import { WebhookDeliverer } from "./webhooks/webhook_deliverer.ts";
import { createProject } from "./projects/project_store.ts";
import { listProjects } from "./storage/project_records.ts";
import { NativeAllocator } from "./util/native_allocator.ts";
import { BackupScheduler } from "./backup/backup_schedule.ts";
import { IndexSettingsCache } from "./index_state/index_settings.ts";
import { SearchRecorder } from "./analytics/search_recorder.ts";
import { SegmentFiles } from "./segments/segment_files.ts";
import { readSnapshotPointer } from "./storage/snapshot_store.ts";
import { kvFilePath } from "./storage/kv_store.ts";
import { dirname, join } from "node:path";
import { scanHelperStarted } from "./vector_scan/scan_helper.ts";
import { listIndexRecords } from "./storage/index_records.ts";

/** The project created on first start, so that a newcomer has a key at once. */
export const DEFAULT_PROJECT_ID = "default";

/** The service without a listener: its handler and what it holds. */
export interface Service {
  context: ServiceContext;
  /** Answers one request; `info` describes the connection, loopback when absent (a call from the same process). */
  handler(request: Request, info?: Deno.ServeHandlerInfo): Promise<Response>;
  /** Writes out the request log and finishes background work and queued jobs. Does not close the store. */
  close(): Promise<void>;
}

/** A running service. */
export interface RunningService {
  /** The address it listens on. */
  addr: Deno.NetAddr;
  context: ServiceContext;
  /**
   * Stops accepting requests, finishes in-flight ones, writes out the request log, and finishes background work.
   * Does not close the store.
   */
  shutdown(): Promise<void>;
}

/** Options of {@link createService} and {@link startService}. */
export interface StartOptions {
  /** Called once with the key of the `default` project when the store had no project. */
  onDefaultProject?: (key: string) => void;
  /** Called once when the server listens. */
  onListen?: (addr: Deno.NetAddr) => void;
  /** This process's number among `PROCESSES` (1 by default); with several, they share the port. */
  process?: number;
  /**
   * Whether large indexes get HNSW graphs (USearch, native code: it needs FFI). By default they do with the `native`
   * embedding backend; without graphs every vector search scans exactly.
   */
  graphs?: boolean;
  /** Where local copies of snapshots are kept (see `SegmentFiles`); none when absent. */
  segmentDir?: string | undefined;
}

/** Creates the `default` project when the store has no project, and hands its key to `onKey`. */
export async function ensureDefaultProject(kv: Deno.Kv, onKey?: (key: string) => void): Promise<void> {
  if ((await listProjects(kv)).length > 0) return;
  const key = await createProject(kv, DEFAULT_PROJECT_ID);
  if (key !== null) onKey?.(key);
}

/** The connection of a request handed to the service from within the same process. */
const IN_PROCESS: Deno.ServeHandlerInfo = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 0 },
  completed: Promise.resolve(),
};

/** Brings a store of an earlier format forward (saying so) and marks a new one; throws for a newer format. */
export async function upgradeStore(kv: Deno.Kv): Promise<void> {
  const format = await upgradeStoreFormat(kv);
  if (format.from !== null && format.from !== format.to) {
    console.log(`Upgraded the store from format ${format.from} to ${format.to}`);
  }
}

/** Index records read at the start to see whether one uses the default model, before it is loaded anyway. */
const MODEL_USE_SCAN_LIMIT = 10_000;

/**
 * Whether to warm the default model at the start: when some index uses it, or none exists yet (a new store, whose first
 * index will likely use it). A store whose indexes all take client vectors never pays the model's runtime and weights.
 */
async function defaultModelWanted(kv: Deno.Kv): Promise<boolean> {
  let scanned = 0;
  for await (const record of listIndexRecords(kv)) {
    if (record.modelId === DEFAULT_MODEL_ID || ++scanned >= MODEL_USE_SCAN_LIMIT) return true;
  }
  return scanned === 0;
}

/** Builds the service over an open store and embedder, with its background work running, but listening nowhere. */
export async function createService(
  kv: Deno.Kv,
  embedder: Embedder,
  config: Config,
  options: StartOptions = {},
): Promise<Service> {
  await upgradeStore(kv);
  await ensureDefaultProject(kv, options.onDefaultProject);
  const background = new BackgroundTasks();
  const metrics = new Metrics();
  const instance: InstanceIdentity = {
    process: options.process ?? 1,
    pid: Deno.pid,
    id: `${Deno.pid}-${crypto.randomUUID()}`,
  };
  const native = config.EMBEDDING_BACKEND === "native";
  const allocator = native ? NativeAllocator.open() : undefined;
  const segments = options.segmentDir === undefined ? undefined : await SegmentFiles.open(options.segmentDir);
  const indexStates = new IndexStates(kv, background, {
    capacity: config.SEARCH_CACHE_INDEXES,
    budgetBytes: searchCacheBudgetBytes(config.SEARCH_CACHE_MB, config.EMBEDDING_BACKEND),
    metrics,
    owner: instance.id,
    graphs: (options.graphs ?? native) ? await loadAnnGraphs() : undefined,
    allocator,
    segments,
  });
  const context: ServiceContext = {
    kv,
    embedder,
    limits: limitsOf(config),
    indexLocks: new KeyedMutex(),
    records: new RecordCache(kv, config.METADATA_CACHE_MS),
    indexStates,
    settings: new IndexSettingsCache(kv),
    background,
    metrics,
    instance,
    undoWindowMs: config.UNDO_WINDOW,
    webhookHosts: config.WEBHOOK_ALLOWED_HOSTS ?? [],
    analytics: config.ANALYTICS
      ? new SearchRecorder(kv, {
        top: config.ANALYTICS_TOP,
        days: config.ANALYTICS_DAYS,
        flushMs: config.ANALYTICS_FLUSH_INTERVAL,
      })
      : undefined,
    analyticsDays: config.ANALYTICS_DAYS,
  };
  context.analytics?.start();
  // At start, for what a killed process left, and then once per log retention time, for the log that the snapshots of
  // an index no longer written to cover.
  let collecting = false;
  const collect = () => {
    if (collecting) return;
    collecting = true;
    background.run("collect garbage", async () => {
      try {
        await collectGarbage(kv);
        // Local copies of versions no longer current, and of indexes gone from the store.
        await segments?.sweep(async (indexId) => (await readSnapshotPointer(kv, indexId))?.versionId);
      } finally {
        collecting = false;
      }
    });
  };
  collect();
  const collector = setInterval(collect, LOG_RETENTION_MS);
  // Scheduled backups, when BACKUP_DIR is set: every instance looks whether one is due, and one at a time writes it.
  const backups = config.BACKUP_DIR === undefined ? undefined : new BackupScheduler(
    kv,
    { dir: config.BACKUP_DIR, intervalMs: config.BACKUP_INTERVAL, keep: config.BACKUP_KEEP },
    { owner: instance.id, metrics },
  );
  backups?.start();
  // Warm the default model, so that the first search does not wait for it; a failure shows in /readyz instead.
  defaultModelWanted(kv).then((wanted) => wanted ? embedder.load(DEFAULT_MODEL_ID) : undefined).catch(() => {});
  // Queued writes (`options.wait: false`); the listener ends when the store closes.
  const jobs = new JobRunner(context);
  jobs.start();
  listenForJobs(kv, (message) => background.watch(jobs.run(message)))
    .catch((error) => console.error("The job queue listener stopped:", error));
  // Webhooks of finished jobs (`options.notify`): every instance delivers the outbox, what a dead one left included.
  const webhooks = new WebhookDeliverer(kv, { metrics, background, allowedHosts: context.webhookHosts });
  webhooks.start();
  const log = config.LOG_REQUESTS ? new RequestLog() : undefined;
  const bodyDeadlines = new BodyDeadlines();
  const rateLimiter = new RateLimiter(kv, metrics);
  const handler = createServiceHandler(context, {
    maxBodyBytes: config.MAX_BODY_BYTES,
    bodyTimeoutMs: config.BODY_TIMEOUT_MS,
    bodyIdleTimeoutMs: config.BODY_IDLE_TIMEOUT_MS,
    bodyDeadlines,
    rateLimiter,
    idempotentRequests: new IdempotentRequests(kv, instance.id),
    projectMaxConcurrency: config.PROJECT_MAX_CONCURRENCY,
    metricsToken: config.METRICS_TOKEN,
    log,
    cors: corsPolicyOf(config.CORS_ORIGINS),
  });
  return {
    context,
    handler: (request, info) => handler(request, info ?? IN_PROCESS),
    async close() {
      // Graph inserts and tunings stop at their next step: the state they build goes with the process.
      context.indexStates.close();
      clearInterval(collector);
      await backups?.stop();
      jobs.stop();
      webhooks.stop();
      bodyDeadlines.stop();
      await rateLimiter.close();
      await context.analytics?.close();
      await log?.flush();
      await background.idle();
      allocator?.close();
    },
  };
}

/**
 * Where a server keeps its local copies of snapshots: `SEGMENT_DIR`, else `segments` beside the store's file, else
 * under `./data` for a store reached by URL; none for `off` or a store in memory.
 */
export function segmentDirOf(config: Config): string | undefined {
  if (config.SEGMENT_DIR === "off" || config.DENO_KV_PATH === ":memory:") return undefined;
  if (config.SEGMENT_DIR !== undefined) return config.SEGMENT_DIR;
  const file = kvFilePath(config.DENO_KV_PATH);
  return file === undefined ? "./data/segments" : join(dirname(file), "segments");
}

/** Serves the service over an open store and embedder on `config.HOSTNAME` and `config.PORT`. */
export async function startService(
  kv: Deno.Kv,
  embedder: Embedder,
  config: Config,
  options: StartOptions = {},
): Promise<RunningService> {
  const service = await createService(kv, embedder, config, {
    ...options,
    segmentDir: options.segmentDir ?? segmentDirOf(config),
  });
  const { promise: listening, resolve } = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve({
    hostname: config.HOSTNAME,
    port: config.PORT,
    reusePort: config.PROCESSES > 1,
    onListen: (addr) => resolve(addr as Deno.NetAddr),
  }, service.handler);
  const addr = await listening;
  options.onListen?.(addr);
  // The vector scan's helper thread starts while the first request is on its way, not during its search.
  scanHelperStarted();
  return {
    addr,
    context: service.context,
    async shutdown() {
      await server.shutdown();
      await service.close();
    },
  };
}
