/** `addDocs`: upserts documents into an index, embedding only new or changed texts. */
import { indexLockKey, type ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import { type DocChange, readDocHeads, vectorOf } from "../storage/doc_records.ts";
import { commitIndexChanges, type IndexRecord, readSettledIndex } from "../storage/index_records.ts";
import { nextTimestamp } from "./index_view.ts";
import { indexNotFound } from "./index_not_found.ts";
import { retryOnConflict } from "./conflict_retries.ts";
import { noteCommittedWrite } from "./committed_write.ts";
import { toStoredDocs } from "./stored_docs.ts";
import { indexModelId } from "./index_model.ts";

/** What `addDocs` answers; `skipped` is present only with `options.upsert: false`. */
export interface AddDocsResult {
  added: number;
  updated: number;
  skipped?: number;
}

/** Adds or replaces documents; 404 if the index is unknown. */
export async function addDocs(ctx: ServiceContext, request: RequestOf<"addDocs">): Promise<AddDocsResult> {
  const { projectId, indexName, docs } = request;
  const upsert = request.options?.upsert ?? true;
  const vectors = new Map<string, Float32Array>();
  return await ctx.indexLocks.run(indexLockKey(projectId, indexName), () =>
    retryOnConflict(indexName, async () => {
      const entry = await readSettledIndex(ctx.kv, projectId, indexName);
      if (entry.value === null) throw indexNotFound(indexName);
      const index = entry.value;
      const heads = await readDocHeads(ctx.kv, index.id, docs.map((doc) => doc.id));
      for (const head of heads.values()) vectors.set(head.hash, vectorOf(head));
      const written = upsert ? docs : docs.filter((doc) => !heads.has(doc.id));
      const stored = await toStoredDocs(ctx, indexModelId(ctx, index), written, vectors);
      const changes: DocChange[] = written.map((doc, i) => ({
        id: doc.id,
        doc: stored[i]!,
        previousParts: heads.get(doc.id)?.parts ?? 0,
      }));
      const added = written.filter((doc) => !heads.has(doc.id)).length;
      const next: IndexRecord = {
        ...index,
        revision: index.revision + 1,
        docCount: index.docCount + added,
        updatedAt: nextTimestamp(index.updatedAt),
      };
      const logBytes = await commitIndexChanges(ctx.kv, entry as Deno.KvEntry<IndexRecord>, changes, next);
      if (logBytes === null) return undefined;
      noteCommittedWrite(ctx, { before: index, after: next, changes, logBytes });
      const result: AddDocsResult = { added, updated: written.length - added };
      if (!upsert) result.skipped = docs.length - written.length;
      return result;
    }));
}
