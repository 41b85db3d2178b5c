/**
 * Re-embeds every document of an index, passage by passage, under a fresh index id that nothing points to yet, then
 * swaps the index record over to it in one atomic commit. Until the swap, searches read the old vectors and writes go
 * on; the writes made meanwhile are copied from the change log before the swap, which checks that none came after. A
 * runner that dies half-way leaves the old index intact, and its half-built id as garbage.
 */
import type { ServiceContext } from "../context.ts";
import { listDocs, passageCountOf, passageTotal, readDocHeads, readDocs } from "../storage/doc_records.ts";
import type { DocChange, StoredDoc } from "../storage/doc_change_codec.ts";
import { readLogTail } from "../storage/change_log.ts";
import type { DocInput } from "../api/request_schemas.ts";
import {
  type IndexRecord,
  readSettledIndex,
  startBuild,
  swapBuiltIndex,
  writeBuiltDocs,
} from "../storage/index_records.ts";
import { StoredDocBuilder } from "../writes/stored_docs.ts";
import { copySettingsVersion, deleteSettingsVersion } from "../storage/settings_records.ts";
import { indexEmbedding } from "../writes/index_embedding.ts";
import { JobLostError } from "../writes/write_docs.ts";
import { nextRevision } from "../writes/next_revision.ts";

/** A re-embedding job: the index, the model to move to, and the runner that holds the job. */
export interface Reembedding {
  projectId: string;
  indexName: string;
  indexId: string;
  modelId: string;
  /** `finish` gives what else the swap's commit writes, given the record it leaves (the job's webhook delivery). */
  job: { id: string; owner: string; finish?: (next: IndexRecord) => Deno.KvMutation[] };
  /** Hears how many documents are re-embedded so far. */
  onProgress?: (done: number) => Promise<void>;
}

/** Rounds of copying the writes made during the job before its swap, after which the job fails. */
const MAX_CATCH_UPS = 100;

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
  /** Embeds `docs` anew and writes them under the new id, over the versions it has; `gone` ids are deleted there. */
  const copy = async (docs: DocInput[], gone: string[] = []) => {
    const stored = await builder.build(docs);
    const heads = await readDocHeads(ctx.kv, target.id, [...docs.map((doc) => doc.id), ...gone]);
    const changes: DocChange[] = [
      ...docs.map((doc, i) => ({ id: doc.id, doc: stored[i]!, previousParts: heads.get(doc.id)?.parts ?? 0 })),
      ...gone.filter((id) => heads.has(id)).map((id) => ({ id, doc: null, previousParts: heads.get(id)!.parts })),
    ];
    await writeBuiltDocs(ctx.kv, target.id, changes);
    const replaced = [...heads.values()].reduce((sum, head) => sum + passageCountOf(head), 0);
    passages += passageTotal(stored) - replaced;
  };
  let batch: DocInput[] = [];
  for await (const [id, doc] of listDocs(ctx.kv, current.value.id)) {
    batch.push(inputOf(id, doc));
    if (batch.length < BATCH_DOCS) continue;
    await copy(batch);
    done += batch.length;
    batch = [];
    await reembedding.onProgress?.(done);
  }
  if (batch.length > 0) await copy(batch);
  // Writes go on during the job, to the index as it is. The listing above saw every change up to `synced`; the later
  // ones are read from the change log and copied again, until a swap finds no write after the last one copied.
  let synced = current.value.revision;
  for (let round = 0; round < MAX_CATCH_UPS; round++) {
    const latest = await heldRecord(ctx, reembedding);
    const before = latest.value;
    if (before.revision !== synced) {
      const tail = await readLogTail(ctx.kv, before.id, synced, before.revision);
      // A log that a snapshot let go of: the job fails, and the index stays as it is, on its old vectors.
      if (tail === null) throw new Error(`The change log of index "${before.name}" no longer covers the re-embedding`);
      const changed = [...new Set(tail.changes.flat().map((change) => change.id))];
      const now = await readDocs(ctx.kv, before.id, changed);
      const present = new Set(now.map(([id]) => id));
      for (let from = 0; from < now.length; from += BATCH_DOCS) {
        await copy(now.slice(from, from + BATCH_DOCS).map(([id, doc]) => inputOf(id, doc)));
      }
      await copy([], changed.filter((id) => !present.has(id)));
      synced = before.revision;
      continue;
    }
    // The settings move with the index: a copy under the new id of the version the record names now.
    const settings = before.settings && await copySettingsVersion(ctx.kv, before.id, target.id, before.settings);
    if (settings === null) continue; // Replaced meanwhile: the next round reads the record again.
    const swapped: IndexRecord = {
      ...nextRevision(before, {
        docDelta: 0,
        passageDelta: passages - (before.passageCount ?? before.docCount),
        jobId: reembedding.job.id,
      }),
      id: target.id,
      modelId: target.modelId,
      modelVersion: target.modelVersion,
      ...(settings === undefined ? {} : { settings }),
    };
    // A lost race is a write (caught up in the next round) or the job's own progress (tried again).
    if (!await swapBuiltIndex(ctx.kv, latest, swapped, reembedding.job.finish?.(swapped))) {
      if (settings !== undefined) await deleteSettingsVersion(ctx.kv, target.id, settings.id);
      continue;
    }
    ctx.records.invalidate(latest.key);
    ctx.indexStates.drop(before.id);
    ctx.indexStates.noteCreated(swapped);
    return swapped;
  }
  throw new Error(`Writes to index "${reembedding.indexName}" kept coming faster than the re-embedding copied them`);
}

/** A stored document as the input that embeds it again. */
function inputOf(id: string, doc: StoredDoc): DocInput {
  return doc.metadata === undefined ? { id, text: doc.text } : { id, text: doc.text, metadata: doc.metadata };
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
