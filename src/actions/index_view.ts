/** The Index object of the spec, as `getIndex` and `listIndexes` return it. */
import type { IndexRecord } from "../storage/index_records.ts";

/** An index as the API shows it. */
export interface IndexView {
  id: string;
  name: string;
  version: string;
  status: "Ready";
  docCount: number;
  createdAt: string;
  updatedAt: string;
  model: { id: string; version: string };
}

/** Shows a stored index record as the API's Index object. */
export function toIndexView(record: IndexRecord): IndexView {
  return {
    id: record.id,
    name: record.name,
    version: String(record.revision),
    status: "Ready",
    docCount: record.docCount,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    model: { id: record.modelId, version: record.modelVersion },
  };
}

/** A timestamp for `updatedAt` that is always later than the previous one, even within one millisecond. */
export function nextTimestamp(previous: string): string {
  return new Date(Math.max(Date.now(), Date.parse(previous) + 1)).toISOString();
}
