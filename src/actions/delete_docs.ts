/** `deleteDocs`: removes documents by id; unknown ids are ignored. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import { passageCountOf, readDocHeads } from "../storage/doc_records.ts";
import { commitIndexChanges } from "../storage/index_records.ts";
import { nextRevision } from "../writes/next_revision.ts";
import { noteCommittedWrite } from "../writes/committed_write.ts";
import { writeToIndex } from "../writes/index_write.ts";

/** Deletes the documents that exist and counts them; 404 if the index is unknown. */
export async function deleteDocs(ctx: ServiceContext, request: RequestOf<"deleteDocs">): Promise<{ deleted: number }> {
  const ids = [...new Set(request.docIds)];
  return await writeToIndex(ctx, request, async (entry) => {
    const index = entry.value;
    const heads = await readDocHeads(ctx.kv, index.id, await ctx.indexStates.heldIds(index, ids) ?? ids);
    const changes = [...heads].map(([id, head]) => ({ id, doc: null, previousParts: head.parts }));
    const passages = [...heads.values()].reduce((sum, head) => sum + passageCountOf(head), 0);
    const next = nextRevision(index, { docDelta: -changes.length, passageDelta: -passages });
    const logBytes = await commitIndexChanges(ctx.kv, entry, changes, next);
    if (logBytes === null) return undefined;
    await noteCommittedWrite(ctx, { before: index, after: next, changes, logBytes });
    return { deleted: changes.length };
  });
}
