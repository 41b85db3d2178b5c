/** The `/metrics` text: request counters and histograms, model usage, KV conflicts, and per-project gauges. */
import { DURATION_BUCKETS, type Metrics } from "./metrics.ts";
import { formatFamilies, type MetricFamily, type Sample } from "./prometheus_text.ts";

/** What the metrics show besides the counters: model usage, and per-project totals read from the store. */
export interface MetricsSources {
  /** Texts embedded and seconds spent, by model. */
  usage: Iterable<[string, { texts: number; seconds: number }]>;
  /** Indexes and documents, by project. */
  totals: ReadonlyMap<string, { indexes: number; docs: number }>;
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
      name: "quire_auth_failures_total",
      type: "counter",
      help: "Requests refused for an unknown project or a wrong or missing key",
      samples: [{ value: metrics.authFailures() }],
    },
  ];
  return formatFamilies(families);
}
