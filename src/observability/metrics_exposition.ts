/** The `/metrics` text: request counters and histograms, model usage, KV conflicts, and per-project gauges. */
import { DURATION_BUCKETS, LOAD_KINDS, type Metrics, WEBHOOK_RESULTS } from "./metrics.ts";
import { formatFamilies, type MetricFamily, type Sample } from "./prometheus_text.ts";

/** What the metrics show besides the counters: model usage, and per-project totals read from the store. */
export interface MetricsSources {
  /** Texts embedded and seconds spent, by model. */
  usage: Iterable<[string, { texts: number; seconds: number }]>;
  /** Indexes and documents, by project. */
  totals: ReadonlyMap<string, { indexes: number; docs: number }>;
  /** Bytes of search state this process holds in memory, and its budget. */
  searchCache: { bytes: number; budget: number };
  /** Vectors waiting for HNSW graphs while background inserts run. */
  graphInsertsWaiting: number;
  /** Which process of the host this is (1 unless `PROCESSES` started several), and its pid. */
  process: { number: number; pid: number };
  /** The process's memory as the runtime reports it (`Deno.memoryUsage()`), in bytes. */
  memory: { rss: number; heapTotal: number; heapUsed: number; external: number };
}

/** Renders every metric of the service in the Prometheus text format. */
export function renderMetrics(metrics: Metrics, sources: MetricsSources): string {
  const { totals } = sources;
  const requests: Sample[] = [];
  for (const [action, byStatus] of metrics.requests()) {
    for (const [status, value] of byStatus) requests.push({ labels: { action, status: String(status) }, value });
  }
  const durations: Sample[] = [];
  for (const [action, histogram] of metrics.durations()) {
    let cumulative = 0;
    DURATION_BUCKETS.forEach((le, i) => {
      cumulative += histogram.buckets[i]!;
      durations.push({ suffix: "_bucket", labels: { action, le: String(le) }, value: cumulative });
    });
    durations.push({ suffix: "_bucket", labels: { action, le: "+Inf" }, value: histogram.count });
    durations.push({ suffix: "_sum", labels: { action }, value: histogram.sum });
    durations.push({ suffix: "_count", labels: { action }, value: histogram.count });
  }
  const usage = [...sources.usage];
  const { conflicts, retries } = metrics.conflicts();
  const families: MetricFamily[] = [
    {
      name: "quire_requests_total",
      type: "counter",
      help: "Requests answered, by action and HTTP status",
      samples: requests,
    },
    {
      name: "quire_request_duration_seconds",
      type: "histogram",
      help: "Time from a request's arrival to its response headers, by action",
      samples: durations,
    },
    {
      name: "quire_docs_embedded_total",
      type: "counter",
      help: "Texts embedded by model runs (documents and search queries), by model",
      samples: usage.map(([model, { texts }]) => ({ labels: { model }, value: texts })),
    },
    {
      name: "quire_embedding_seconds_total",
      type: "counter",
      help: "Time spent in model runs, by model",
      samples: usage.map(([model, { seconds }]) => ({ labels: { model }, value: seconds })),
    },
    {
      name: "quire_indexes",
      type: "gauge",
      help: "Indexes, by project",
      samples: [...totals].map(([project, { indexes }]) => ({ labels: { project }, value: indexes })),
    },
    {
      name: "quire_docs",
      type: "gauge",
      help: "Documents in all indexes, by project",
      samples: [...totals].map(([project, { docs }]) => ({ labels: { project }, value: docs })),
    },
    {
      name: "quire_kv_commit_conflicts_total",
      type: "counter",
      help: "Index writes whose KV commit lost a race with another writer",
      samples: [{ value: conflicts }],
    },
    {
      name: "quire_kv_commit_retries_total",
      type: "counter",
      help: "Index writes tried again after a lost race",
      samples: [{ value: retries }],
    },
    {
      name: "quire_index_loads_total",
      type: "counter",
      help: "Loads of an index's search state into this process's memory, by kind (snapshot from the store, " +
        "local: from this host's copy of it, catchup, full)",
      samples: LOAD_KINDS.map((kind) => ({ labels: { kind }, value: metrics.loads().get(kind) ?? 0 })),
    },
    {
      name: "quire_snapshots_written_total",
      type: "counter",
      help: "Index snapshots this process wrote and swapped in",
      samples: [{ value: metrics.snapshotsWritten() }],
    },
    {
      name: "quire_backups_total",
      type: "counter",
      help: "Scheduled backups this process wrote (ok) or failed to write (failed; tried again at the next interval)",
      samples: (["ok", "failed"] as const).map((result) => ({ labels: { result }, value: metrics.backups()[result] })),
    },
    {
      name: "quire_last_backup_time_seconds",
      type: "gauge",
      help: "When the store's last whole backup began (by any instance), in seconds since the epoch; absent before one",
      samples: lastBackupSamples(metrics.lastBackupSuccess()),
    },
    {
      name: "quire_search_cache_bytes",
      type: "gauge",
      help: "Bytes of search state this process holds in memory (an estimate)",
      samples: [{ value: sources.searchCache.bytes }],
    },
    {
      name: "quire_search_cache_budget_bytes",
      type: "gauge",
      help: "SEARCH_CACHE_MB in bytes: the most search state this process holds",
      samples: [{ value: sources.searchCache.budget }],
    },
    {
      name: "quire_graph_inserts_waiting",
      type: "gauge",
      help:
        "Vectors waiting to join HNSW graphs while background inserts run (searches scan their int8 codes meanwhile)",
      samples: [{ value: sources.graphInsertsWaiting }],
    },
    {
      name: "quire_search_cache_evictions_total",
      type: "counter",
      help: "Indexes dropped from memory to stay within SEARCH_CACHE_MB",
      samples: [{ value: metrics.evictions() }],
    },
    {
      name: "quire_jobs_taken_over_total",
      type: "counter",
      help: "Queued jobs this process took over from a runner whose lease expired",
      samples: [{ value: metrics.jobsTakenOver() }],
    },
    {
      name: "quire_webhook_deliveries_total",
      type: "counter",
      help: "Webhook delivery attempts of this process: delivered (ok), failed and to be retried, or given up",
      samples: WEBHOOK_RESULTS.map((result) => ({ labels: { result }, value: metrics.webhooks().get(result) ?? 0 })),
    },
    {
      name: "quire_process_resident_memory_bytes",
      type: "gauge",
      help: "Resident memory of this process (RSS): what the operating system counts against it",
      samples: [{ value: sources.memory.rss }],
    },
    {
      name: "quire_heap_bytes",
      type: "gauge",
      help: "V8's JavaScript heap: its size (total) and what live and not yet collected objects use of it (used)",
      samples: [
        { labels: { kind: "total" }, value: sources.memory.heapTotal },
        { labels: { kind: "used" }, value: sources.memory.heapUsed },
      ],
    },
    {
      name: "quire_external_memory_bytes",
      type: "gauge",
      help: "Memory outside the JavaScript heap that its objects hold: array buffers, including vectors and codes",
      samples: [{ value: sources.memory.external }],
    },
    {
      name: "quire_process_info",
      type: "gauge",
      help: "Which process this is: its number among PROCESSES and its pid",
      samples: [{ labels: { process: String(sources.process.number), pid: String(sources.process.pid) }, value: 1 }],
    },
    {
      name: "quire_auth_failures_total",
      type: "counter",
      help: "Requests refused for an unknown project or a wrong or missing key",
      samples: [{ value: metrics.authFailures() }],
    },
    {
      name: "quire_rate_limited_total",
      type: "counter",
      help: "Requests refused (429) for passing their key's requestsPerMinute, by key id",
      samples: [...metrics.rateLimited()].map(([key, value]) => ({ labels: { key }, value })),
    },
  ];
  return formatFamilies(families);
}

function lastBackupSamples(at: number | undefined): Sample[] {
  return at === undefined ? [] : [{ value: at / 1000 }];
}
