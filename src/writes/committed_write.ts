/** What follows every committed document write: the in-memory search state and the snapshot policy hear of it. */
import type { ServiceContext } from "../context.ts";
import type { DocChange } from "../storage/doc_records.ts";
import type { IndexRecord } from "../storage/index_records.ts";
import { indexKey } from "../storage/kv_keys.ts";

/** A committed write: the record before and after, the changes, and their size in the change log. */
export interface CommittedWrite {
  before: IndexRecord;
  after: IndexRecord;
  changes: DocChange[];
  logBytes: number;
}

/** Updates the cached search state in place, forgets the cached record, and lets the snapshot scheduler count the log. */
export function noteCommittedWrite(ctx: ServiceContext, write: CommittedWrite): void {
  const { before, after, changes, logBytes } = write;
  ctx.records.invalidate(indexKey(after.projectId, after.name));
  ctx.searchIndexes.applyWrite(after.id, before.revision, after.revision, changes);
  ctx.snapshots.noteWrite({ projectId: after.projectId, indexName: after.name, indexId: after.id }, logBytes);
}
