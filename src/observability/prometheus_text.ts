/** Writes metric families in the Prometheus text exposition format (version 0.0.4). */

/** The `Content-Type` of the format. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** One sample: its labels and value; `suffix` extends the family name (`_bucket`, `_sum`, `_count`). */
export interface Sample {
  suffix?: string;
  labels?: Record<string, string>;
  value: number;
}

/** A metric family: name, type, help text and samples. */
export interface MetricFamily {
  name: string;
  type: "counter" | "gauge" | "histogram";
  help: string;
  samples: Sample[];
}

/** The text of the families, each with its `# HELP` and `# TYPE` lines. */
export function formatFamilies(families: MetricFamily[]): string {
  let text = "";
  for (const family of families) {
    text += `# HELP ${family.name} ${family.help.replaceAll("\\", "\\\\").replaceAll("\n", "\\n")}\n`;
    text += `# TYPE ${family.name} ${family.type}\n`;
    for (const sample of family.samples) {
      text += `${family.name}${sample.suffix ?? ""}${formatLabels(sample.labels)} ${formatValue(sample.value)}\n`;
    }
  }
  return text;
}

function formatLabels(labels: Record<string, string> | undefined): string {
  if (labels === undefined) return "";
  const pairs = Object.entries(labels).map(([name, value]) => `${name}="${escapeLabelValue(value)}"`);
  return pairs.length === 0 ? "" : `{${pairs.join(",")}}`;
}

/** Escapes a label value as the format requires: backslash, double quote and line feed. */
function escapeLabelValue(value: string): string {
  return value.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n");
}

function formatValue(value: number): string {
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return Number.isNaN(value) ? "NaN" : String(value);
}
