/** The Index object of the spec, as `getIndex` and `listIndexes` return it. */
import type { IndexRecord } from "../storage/index_records.ts";

/** An index's state: `Building` (new) and `Updating` (existing, searchable as it was) while a queued write runs. */
export type IndexStatus = "Ready" | "Building" | "Updating" | "Failed";

/** An index as the API shows it; `progress` while a queued write runs, `error` after it failed. */
export interface IndexView {
  id: string;
  name: string;
  version: string;
  status: IndexStatus;
  docCount: number;
  createdAt: string;
  updatedAt: string;
  model: { id: string; version: string };
  progress?: { done: number; total: number };
  error?: string;
}

/** Shows a stored index record as the API's Index object. */
export function toIndexView(record: IndexRecord): IndexView {
  const view: IndexView = {
    id: record.id,
    name: record.name,
    version: String(record.revision),
    status: "Ready",
    docCount: record.docCount,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    model: { id: record.modelId, version: record.modelVersion },
  };
  const job = record.job;
  if (job?.state === "running") {
    view.status = job.kind === "create" ? "Building" : "Updating";
    view.progress = { done: job.done, total: job.total };
  } else if (job?.state === "failed") {
    view.status = "Failed";
    view.error = job.error ?? "The queued write failed";
  }
  return view;
}

/** A timestamp for `updatedAt` that is always later than the previous one, even within one millisecond. */
export function nextTimestamp(previous: string): string {
  return new Date(Math.max(Date.now(), Date.parse(previous) + 1)).toISOString();
}
