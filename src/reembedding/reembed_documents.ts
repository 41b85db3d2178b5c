/**
 * Re-embeds every document of an index, passage by passage, under a fresh index id that nothing points to yet, then
 * swaps the index record over to it in one atomic commit. Until the swap, searches read the old vectors; a runner
 * that dies half-way leaves the old index intact, and its half-built id as garbage.
 */
import type { ServiceContext } from "../context.ts";
import { listDocs, passageTotal } from "../storage/doc_records.ts";
import type { DocInput } from "../api/request_schemas.ts";
import {
  type IndexRecord,
  readSettledIndex,
  startBuild,
  swapBuiltIndex,
  writeBuiltDocs,
} from "../storage/index_records.ts";
import { StoredDocBuilder } from "../writes/stored_docs.ts";
import { indexEmbedding } from "../writes/index_embedding.ts";
import { JobLostError } from "../writes/write_docs.ts";
import { nextRevision } from "../writes/next_revision.ts";
import { retryOnConflict } from "../writes/conflict_retries.ts";

/** A re-embedding job: the index, the model to move to, and the runner that holds the job. */
export interface Reembedding {
  projectId: string;
  indexName: string;
  indexId: string;
  modelId: string;
  job: { id: string; owner: string };
  /** Hears how many documents are re-embedded so far. */
  onProgress?: (done: number) => Promise<void>;
}

/** Documents embedded per commit of the new id's records. */
const BATCH_DOCS = 64;

/** Re-embeds the index and swaps it in; throws {@link JobLostError} once another runner holds the job. */
export async function reembedDocuments(ctx: ServiceContext, reembedding: Reembedding): Promise<IndexRecord> {
  const { modelId } = reembedding;
  const current = await heldRecord(ctx, reembedding);
  const spec = ctx.embedder.spec(modelId)!;
  const target: IndexRecord = {
    ...current.value,
    id: crypto.randomUUID(),
    modelId,
    modelVersion: spec.version,
  };
  await startBuild(ctx.kv, target.id);
  const builder = new StoredDocBuilder(ctx, await indexEmbedding(ctx, target));
  let done = 0;
  let passages = 0;
  let batch: DocInput[] = [];
  const flush = async () => {
    const stored = await builder.build(batch);
    await writeBuiltDocs(ctx.kv, target.id, batch.map((doc, i) => ({ id: doc.id, doc: stored[i]!, previousParts: 0 })));
    passages += passageTotal(stored);
    done += batch.length;
    batch = [];
    await reembedding.onProgress?.(done);
  };
  for await (const [id, doc] of listDocs(ctx.kv, current.value.id)) {
    batch.push(doc.metadata === undefined ? { id, text: doc.text } : { id, text: doc.text, metadata: doc.metadata });
    if (batch.length === BATCH_DOCS) await flush();
  }
  if (batch.length > 0) await flush();
  // Writes answer 409 while the job runs, so the documents read are still the index's. The commit is retried while
  // only the job's progress and lease moved the record on.
  return await retryOnConflict({ indexName: reembedding.indexName, metrics: ctx.metrics }, async () => {
    const latest = await heldRecord(ctx, reembedding);
    const before = latest.value;
    const swapped: IndexRecord = {
      ...nextRevision(before, {
        docDelta: 0,
        passageDelta: passages - (before.passageCount ?? before.docCount),
        jobId: reembedding.job.id,
      }),
      id: target.id,
      modelId: target.modelId,
      modelVersion: target.modelVersion,
    };
    if (!await swapBuiltIndex(ctx.kv, latest, swapped)) return undefined;
    ctx.records.invalidate(latest.key);
    ctx.indexStates.drop(before.id);
    ctx.indexStates.noteCreated(swapped);
    return swapped;
  });
}

/** The index record while this runner still holds the job; {@link JobLostError} otherwise. */
async function heldRecord(ctx: ServiceContext, reembedding: Reembedding): Promise<Deno.KvEntry<IndexRecord>> {
  const entry = await readSettledIndex(ctx.kv, reembedding.projectId, reembedding.indexName);
  const job = entry.value?.job;
  if (
    entry.value?.id !== reembedding.indexId || job?.id !== reembedding.job.id || job.owner !== reembedding.job.owner ||
    job.state !== "running"
  ) {
    throw new JobLostError(reembedding.job.id);
  }
  return entry as Deno.KvEntry<IndexRecord>;
}
