/** The index record after a document write. */
import type { IndexRecord } from "../storage/index_records.ts";

/** How a write changes the record. */
export interface RevisionChange {
  /** Documents added minus documents removed. */
  docDelta: number;
  /** Passages added minus passages removed. */
  passageDelta: number;
  /** The queued job that this write finishes, if any. */
  jobId?: string;
}

/**
 * The next revision of `index`: one more revision, the new document count and a later `updatedAt`. A running job
 * stays on the record unless this write finishes it; a failed one is cleared by any successful write.
 */
export function nextRevision(index: IndexRecord, change: RevisionChange): IndexRecord {
  const { job, ...rest } = index;
  const next: IndexRecord = {
    ...rest,
    revision: index.revision + 1,
    docCount: index.docCount + change.docDelta,
    passageCount: (index.passageCount ?? index.docCount) + change.passageDelta,
    updatedAt: nextTimestamp(index.updatedAt),
  };
  if (job?.state === "running" && job.id !== change.jobId) next.job = job;
  return next;
}

/** A timestamp for `updatedAt` that is always later than the previous one, even within one millisecond. */
function nextTimestamp(previous: string): string {
  return new Date(Math.max(Date.now(), Date.parse(previous) + 1)).toISOString();
}
