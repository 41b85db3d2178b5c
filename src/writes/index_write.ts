/**
 * The opening every write to an existing index shares: this process's per-index lock, then optimistic attempts that
 * each read the settled record (404 once it is gone) and commit with a check on it.
 */
import type { ServiceContext } from "../context.ts";
import { indexNotFound, indexReembedding } from "../api/index_errors.ts";
import { type IndexRecord, readSettledIndex } from "../storage/index_records.ts";
import { retryOnConflict } from "./conflict_retries.ts";

/** The index a write goes to. */
export interface IndexTarget {
  projectId: string;
  indexName: string;
}

/** The key under which writes to one index are serialised within this process. */
export function indexLockKey(target: IndexTarget): string {
  return JSON.stringify([target.projectId, target.indexName]);
}

/** Whether a re-embedding job runs on the index, during which its documents stay as they are. */
function isReembedding(record: IndexRecord): boolean {
  return record.job?.state === "running" && record.job.kind === "reembed";
}

/**
 * Runs `attempt` under the index's lock with its current record, again while it returns `undefined` (its commit lost
 * a race); 404 when the index does not exist, 409 after the last lost race. With `notWhileReembedding` (a delete of
 * the whole index), 409 while a re-embedding runs; document writes go on during one.
 */
export async function writeToIndex<T>(
  ctx: ServiceContext,
  target: IndexTarget & { notWhileReembedding?: boolean },
  attempt: (entry: Deno.KvEntry<IndexRecord>) => Promise<T | undefined>,
): Promise<T> {
  const { projectId, indexName } = target;
  return await ctx.indexLocks.run(
    indexLockKey(target),
    () =>
      retryOnConflict({ indexName, metrics: ctx.metrics }, async () => {
        const entry = await readSettledIndex(ctx.kv, projectId, indexName);
        if (entry.value === null) throw indexNotFound(indexName);
        if (target.notWhileReembedding && isReembedding(entry.value)) throw indexReembedding(indexName);
        return await attempt(entry as Deno.KvEntry<IndexRecord>);
      }),
  );
}
