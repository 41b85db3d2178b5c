/** `deleteDocs`: removes documents by id; unknown ids are ignored. */
import { indexLockKey, type ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import { readDocHeads } from "../storage/doc_records.ts";
import { commitIndexChanges, type IndexRecord, readSettledIndex } from "../storage/index_records.ts";
import { nextRevision } from "./next_revision.ts";
import { indexNotFound } from "./index_not_found.ts";
import { retryOnConflict } from "./conflict_retries.ts";
import { noteCommittedWrite } from "./committed_write.ts";

/** Deletes the documents that exist and counts them; 404 if the index is unknown. */
export async function deleteDocs(ctx: ServiceContext, request: RequestOf<"deleteDocs">): Promise<{ deleted: number }> {
  const { projectId, indexName } = request;
  const ids = [...new Set(request.docIds)];
  const target = { indexName, metrics: ctx.metrics };
  return await ctx.indexLocks.run(indexLockKey(projectId, indexName), () =>
    retryOnConflict(target, async () => {
      const entry = await readSettledIndex(ctx.kv, projectId, indexName);
      if (entry.value === null) throw indexNotFound(indexName);
      const index = entry.value;
      const heads = await readDocHeads(ctx.kv, index.id, ids);
      const changes = [...heads].map(([id, head]) => ({ id, doc: null, previousParts: head.parts }));
      const next = nextRevision(index, { docDelta: -changes.length });
      const logBytes = await commitIndexChanges(ctx.kv, entry as Deno.KvEntry<IndexRecord>, changes, next);
      if (logBytes === null) return undefined;
      noteCommittedWrite(ctx, { before: index, after: next, changes, logBytes });
      return { deleted: changes.length };
    }));
}
