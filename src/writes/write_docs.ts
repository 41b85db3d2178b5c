/** Writes documents into an index: embeds what is new first, outside the index's lock, then commits under it. */
import type { ServiceContext } from "../context.ts";
import type { DocInput } from "../api/request_schemas.ts";
import type { AddDocsResult } from "../api/response_schemas.ts";
import { indexNotFound } from "../api/index_errors.ts";
import { passageCountOf, passageTotal, readDocHeads, readDocs } from "../storage/doc_records.ts";
import type { DocChange } from "../storage/doc_change_codec.ts";
import { commitIndexChanges, type IndexRecord, readSettledIndex } from "../storage/index_records.ts";
import { nextRevision } from "./next_revision.ts";
import { noteCommittedWrite } from "./committed_write.ts";
import { StoredDocBuilder } from "./stored_docs.ts";
import { checkDocVectors, indexEmbedding } from "./index_embedding.ts";
import { type IndexTarget, writeToIndex } from "./index_write.ts";

/** Documents to write into an index. */
export interface DocWrite extends IndexTarget {
  docs: DocInput[];
  upsert: boolean;
  /**
   * The queued job this write finishes, if any, and the instance running it: the commit lands only while the record
   * still names that job and owner, and clears the job. `finish` gives what else that commit writes, given the record
   * it leaves (the job's webhook delivery).
   */
  job?: { id: string; owner: string; finish?: (next: IndexRecord) => Deno.KvMutation[] };
  /** Hears how many of the documents to embed are embedded so far. */
  onProgress?: (done: number, total: number) => Promise<void>;
}

/** The write of a queued job whose lease another instance has taken over. */
export class JobLostError extends Error {
  constructor(jobId: string) {
    super(`Job ${jobId} was taken over by another instance`);
    this.name = "JobLostError";
  }
}

/** Documents embedded per step of a write, between progress reports. */
const EMBEDDING_STEP = 256;

/** How often a write starts again because a re-embedding swapped its index's id (and model) under it. */
const MAX_SWAPS = 3;

/** The index's id changed under a write: a re-embedding swapped in its new vectors, so the write embeds again. */
class IndexSwapped extends Error {}

/**
 * Adds or replaces documents; 404 if the index is unknown. Embeds first, outside the index's write lock, then commits
 * under it, and retries when another process wrote the index in between. A write during a re-embedding goes to the
 * index as it is, and the re-embedding copies it; one that meets the swap embeds again with the new model.
 */
export async function writeDocs(ctx: ServiceContext, write: DocWrite): Promise<AddDocsResult> {
  for (let swaps = 0;; swaps++) {
    try {
      return await writeDocsOnce(ctx, write);
    } catch (error) {
      if (!(error instanceof IndexSwapped) || swaps === MAX_SWAPS) throw error;
    }
  }
}

async function writeDocsOnce(ctx: ServiceContext, write: DocWrite): Promise<AddDocsResult> {
  const { projectId, indexName, docs, upsert } = write;
  const first = await readSettledIndex(ctx.kv, projectId, indexName);
  if (first.value === null) throw indexNotFound(indexName);
  await checkDocVectors(ctx, first.value, docs);
  const builder = new StoredDocBuilder(ctx, await indexEmbedding(ctx, first.value));
  // The current versions' passages, so that passages whose text is unchanged keep their vectors. Documents that bring
  // their own vectors embed nothing: a bulk load of client vectors reads nothing here.
  const unembedded = docs.filter((doc) => doc.vector === undefined);
  const current = await readDocs(ctx.kv, first.value.id, unembedded.map((doc) => doc.id));
  for (const [, doc] of current) builder.remember(doc);
  const existing = new Set(current.map(([id]) => id));
  const toEmbed = upsert ? unembedded : unembedded.filter((doc) => !existing.has(doc.id));
  for (let done = 0; done < toEmbed.length; done += EMBEDDING_STEP) {
    await builder.build(toEmbed.slice(done, done + EMBEDDING_STEP));
    await write.onProgress?.(Math.min(done + EMBEDDING_STEP, toEmbed.length), toEmbed.length);
  }
  return await writeToIndex(ctx, write, async (entry) => {
    const index = entry.value;
    if (index.id !== first.value.id) {
      // A queued write's job ends with its index's id; a client's write starts again on the new one.
      if (write.job !== undefined) throw indexNotFound(indexName);
      throw new IndexSwapped();
    }
    const { job } = write;
    if (job !== undefined && (index.job?.id !== job.id || index.job.owner !== job.owner)) {
      throw new JobLostError(job.id);
    }
    const ids = docs.map((doc) => doc.id);
    const heads = await readDocHeads(ctx.kv, index.id, await ctx.indexStates.heldIds(index, ids) ?? ids);
    const written = upsert ? docs : docs.filter((doc) => !heads.has(doc.id));
    const stored = await builder.build(written);
    const changes: DocChange[] = written.map((doc, i) => ({
      id: doc.id,
      doc: stored[i]!,
      previousParts: heads.get(doc.id)?.parts ?? 0,
    }));
    const added = written.filter((doc) => !heads.has(doc.id)).length;
    const passageDelta = passageTotal(stored) -
      written.reduce((sum, doc) => sum + (heads.has(doc.id) ? passageCountOf(heads.get(doc.id)!) : 0), 0);
    const next = nextRevision(index, { docDelta: added, passageDelta, jobId: write.job?.id });
    const logBytes = await commitIndexChanges(ctx.kv, entry, changes, next, write.job?.finish?.(next));
    if (logBytes === null) return undefined;
    await noteCommittedWrite(ctx, { before: index, after: next, changes, logBytes });
    const result: AddDocsResult = { added, updated: written.length - added };
    if (!upsert) result.skipped = docs.length - written.length;
    return result;
  });
}
