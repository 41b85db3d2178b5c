/** What follows every committed document write: the record cache and the in-memory search state hear of it. */
import type { ServiceContext } from "../context.ts";
import type { CommittedWrite } from "../index_state/index_states.ts";
import { indexKey } from "../storage/kv_keys.ts";

/**
 * Forgets the cached record, updates the cached search state in place, and lets the snapshot policy count the log.
 * Resolves once the index's graph has caught up enough for another write (see `IndexStates.noteWrite`).
 */
export function noteCommittedWrite(ctx: ServiceContext, write: CommittedWrite): Promise<void> {
  ctx.records.invalidate(indexKey(write.after.projectId, write.after.name));
  return ctx.indexStates.noteWrite(write);
}
