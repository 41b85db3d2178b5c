/**
 * Index records and the writes that change them. A write's document changes and the index record move together: in
 * one atomic commit when they fit, otherwise staged first and made visible by one commit of the record, which then
 * names the staged batch until it has been applied.
 */
import { changeMutations } from "./doc_records.ts";
import { decodeDocChanges, type DocChange, encodeDocChanges } from "./doc_change_codec.ts";
import {
  aliasKey,
  deletedIndexKey,
  indexesPrefix,
  indexKey,
  stagedBatchPrefix,
  stagedChunkKey,
  trashKey,
} from "./kv_keys.ts";
import {
  batchMutations,
  commitInBatches,
  deleteTrees,
  MAX_CHUNK_BYTES,
  readChunks,
  writeChunks,
} from "./kv_batches.ts";
import { logMutation } from "./change_log.ts";
import { newTimedId } from "./timed_id.ts";
import type { PassageSettings } from "../passages/passage_settings.ts";

/** A staged batch of changes that the record has made visible but the document records do not show yet. */
export interface PendingBatch {
  batchId: string;
  chunks: number;
}

/** A `wait: false` write that runs from the job queue: while running, and after failing until the next write. */
export interface IndexJob {
  id: string;
  /** `create` shows the index as `Building`, `add` and `reembed` as `Updating`. */
  kind: "create" | "add" | "reembed";
  state: "running" | "failed";
  done: number;
  total: number;
  error?: string;
  /** The instance running it, while its lease lasts; another instance takes over a job whose lease has expired. */
  owner?: string;
  /** When the owner's lease ends (milliseconds since the epoch), unless renewed. */
  leaseUntil?: number;
}

/** An index as stored. */
export interface IndexRecord {
  id: string;
  projectId: string;
  name: string;
  modelId: string;
  modelVersion: string;
  /** Counts successful document writes; shown as the index `version`. */
  revision: number;
  docCount: number;
  /** How many passages (and so vectors) the documents have; absent in a record written before passages: `docCount`. */
  passageCount?: number;
  /** How texts split into passages, when set at creation; the defaults for the model otherwise. */
  passages?: PassageSettings;
  /** The language full-text search analyzes texts in, when set at creation; English otherwise. */
  language?: string;
  createdAt: string;
  updatedAt: string;
  /** The version of its settings (synonyms, pins) stored as chunks; none while it has no settings. */
  settings?: SettingsVersion;
  pending?: PendingBatch;
  job?: IndexJob;
}

/** One version of an index's settings: its id (a fresh one per change) and how many chunks hold its JSON. */
export interface SettingsVersion {
  id: string;
  chunks: number;
}

/** A deleted index as kept for `restoreIndex`, under its id. */
export interface DeletedIndex {
  record: IndexRecord;
  deletedAt: string;
  /** When `restoreIndex` stops bringing it back and its storage is reclaimed. */
  expiresAt: string;
}

/** Why an index id's data is garbage, and since when. */
export interface TrashMarker {
  reason: "building" | "deleted";
  since: number;
}

/** Reads an index record as it is, pending batch or not; null when there is none. */
export async function readIndexRecord(kv: Deno.Kv, projectId: string, name: string): Promise<IndexRecord | null> {
  return (await kv.get<IndexRecord>(indexKey(projectId, name))).value;
}

/** Lists index records in name order: of one project (after the name `after`, if given), or of every project. */
export async function* listIndexRecords(
  kv: Deno.Kv,
  options: { projectId?: string; after?: string } = {},
): AsyncGenerator<IndexRecord> {
  const prefix = indexesPrefix(options.projectId);
  // "\0" is the least suffix, so names after `after` sort from there on.
  const selector = options.after === undefined ? { prefix } : { prefix, start: [...prefix, `${options.after}\0`] };
  for await (const entry of kv.list<IndexRecord>(selector)) yield entry.value;
}

/** Replaces an index record if it is still `current`; returns whether it did. */
export async function replaceIndexRecord(
  kv: Deno.Kv,
  current: Deno.KvEntry<IndexRecord>,
  record: IndexRecord,
  also: Deno.KvMutation[] = [],
): Promise<boolean> {
  return (await kv.atomic().check(current).set(current.key, record).mutate(...also).commit()).ok;
}

/** Reads an index record, first applying any pending batch so that its documents match it. */
export async function readSettledIndex(
  kv: Deno.Kv,
  projectId: string,
  name: string,
): Promise<Deno.KvEntryMaybe<IndexRecord>> {
  for (;;) {
    const entry = await kv.get<IndexRecord>(indexKey(projectId, name));
    if (entry.value?.pending === undefined) return entry;
    await applyPendingBatch(kv, entry as Deno.KvEntry<IndexRecord>);
  }
}

/**
 * Starts building an index's documents under `indexId`, which no record names yet: its marker lets garbage collection
 * find them if the builder dies before {@link publishBuiltIndex} or {@link swapBuiltIndex}.
 */
export async function startBuild(kv: Deno.Kv, indexId: string): Promise<void> {
  await kv.set(trashKey(indexId), { reason: "building", since: Date.now() } satisfies TrashMarker);
}

/** Writes document changes under an index id that is being built, in as many commits as they need. */
export async function writeBuiltDocs(kv: Deno.Kv, indexId: string, changes: DocChange[]): Promise<void> {
  await commitInBatches(kv, changes.flatMap((change) => changeMutations(indexId, change)));
}

/** Gives up a build: its documents are garbage from now on. */
export async function abandonBuild(kv: Deno.Kv, indexId: string): Promise<void> {
  await kv.set(trashKey(indexId), { reason: "deleted", since: Date.now() } satisfies TrashMarker);
}

/** Makes a built index visible under its name; false, leaving the build to abandon, when the name is taken. */
export async function publishBuiltIndex(kv: Deno.Kv, record: IndexRecord): Promise<boolean> {
  const key = indexKey(record.projectId, record.name);
  const result = await kv.atomic().check(...nameIsFree(record)).set(key, record).delete(trashKey(record.id)).commit();
  return result.ok;
}

/**
 * Points an index's record at a built index id in place of its current one, if the record is still `current`; the
 * old id's data becomes garbage in the same commit, and so do the mutations of `also` (a finished job's webhook).
 */
export async function swapBuiltIndex(
  kv: Deno.Kv,
  current: Deno.KvEntry<IndexRecord>,
  next: IndexRecord,
  also: Deno.KvMutation[] = [],
): Promise<boolean> {
  const deleted: TrashMarker = { reason: "deleted", since: Date.now() };
  const result = await kv.atomic().check(current).set(current.key, next).delete(trashKey(next.id))
    .set(trashKey(current.value.id), deleted).mutate(...also).commit();
  return result.ok;
}

/**
 * Creates an index record with its first documents. Returns false, leaving nothing behind, when the name is taken.
 */
export async function createIndexRecord(kv: Deno.Kv, record: IndexRecord, changes: DocChange[]): Promise<boolean> {
  const key = indexKey(record.projectId, record.name);
  const mutations = changes.flatMap((change) => changeMutations(record.id, change));
  const batches = batchMutations(mutations);
  if (batches.length <= 1) {
    const result = await kv.atomic().check(...nameIsFree(record)).set(key, record).mutate(...(batches[0] ?? []))
      .commit();
    return result.ok;
  }
  // The documents are written under a fresh index id that nothing points to yet.
  await startBuild(kv, record.id);
  await commitInBatches(kv, mutations);
  const published = await publishBuiltIndex(kv, record);
  if (!published) await abandonBuild(kv, record.id);
  return published;
}

/**
 * Commits `changes`, their change-log entry and the `next` record if the record is still `current`, in the record's
 * commit with the few small mutations of `also` (a finished job's webhook). Returns the size of the logged changes in
 * bytes, or null on a conflict, so that the caller can read again and retry.
 */
export async function commitIndexChanges(
  kv: Deno.Kv,
  current: Deno.KvEntry<IndexRecord>,
  changes: DocChange[],
  next: IndexRecord,
  also: Deno.KvMutation[] = [],
): Promise<number | null> {
  const encoded = encodeDocChanges(changes);
  if (encoded.byteLength <= MAX_CHUNK_BYTES) {
    const mutations = changes.flatMap((change) => changeMutations(next.id, change));
    mutations.push(logMutation(next.id, next.revision, { bytes: encoded }));
    const batches = batchMutations(mutations);
    if (batches.length === 1) {
      // A batch stays well below the store's limits, so that these few fit beside it.
      const result = await kv.atomic().check(current).set(current.key, next).mutate(...batches[0]!, ...also).commit();
      return result.ok ? encoded.byteLength : null;
    }
  }
  const batchId = newTimedId();
  const chunks = await writeChunks(kv, encoded, (seq) => stagedChunkKey(next.id, batchId, seq));
  const pending: PendingBatch = { batchId, chunks };
  const result = await kv.atomic().check(current).set(current.key, { ...next, pending })
    .mutate(logMutation(next.id, next.revision, pending), ...also).commit();
  if (!result.ok) {
    await deleteTrees(kv, [stagedBatchPrefix(next.id, batchId)]);
    return null;
  }
  await applyPendingBatch(kv, { ...current, value: { ...next, pending }, versionstamp: result.versionstamp }, changes);
  return encoded.byteLength;
}

/**
 * Applies a record's pending batch to the document records, then clears it. Every commit checks that the record is
 * unchanged, so that a slower process applying the same batch stops once another has finished it. The staged chunks
 * stay: the change log names them until a snapshot covers their revision. The process that staged the batch passes
 * its `changes` rather than reading them back.
 */
async function applyPendingBatch(
  kv: Deno.Kv,
  entry: Deno.KvEntry<IndexRecord>,
  staged?: DocChange[],
): Promise<void> {
  const pending = entry.value.pending!;
  const changes = staged ?? await readPendingBatch(kv, entry.value.id, pending);
  // Gone only when another process applied the batch and a snapshot has since covered its revision.
  if (changes === null) return;
  const mutations = changes.flatMap((change) => changeMutations(entry.value.id, change));
  if (!await commitInBatches(kv, mutations, [entry])) return;
  const { pending: _, ...settled } = entry.value;
  await kv.atomic().check(entry).set(entry.key, settled).commit();
}

async function readPendingBatch(kv: Deno.Kv, indexId: string, pending: PendingBatch): Promise<DocChange[] | null> {
  const bytes = await readChunks(kv, pending.chunks, (seq) => stagedChunkKey(indexId, pending.batchId, seq));
  return bytes === null ? null : decodeDocChanges(bytes);
}

/**
 * Removes an index record if it is still `current`. Within an undo window of `undoMs` its data stays, kept for
 * `restoreIndex` under the index's id; without one it is marked as garbage in the same commit.
 */
export async function deleteIndexRecord(
  kv: Deno.Kv,
  current: Deno.KvEntry<IndexRecord>,
  undoMs: number,
): Promise<boolean> {
  const { id, projectId } = current.value;
  const commit = kv.atomic().check(current).delete(current.key);
  if (undoMs > 0) {
    const now = Date.now();
    const deleted: DeletedIndex = {
      record: current.value,
      deletedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + undoMs).toISOString(),
    };
    commit.set(deletedIndexKey(projectId, id), deleted);
  } else {
    commit.set(trashKey(id), { reason: "deleted", since: Date.now() } satisfies TrashMarker);
  }
  return (await commit.commit()).ok;
}

/** The checks that a new index's name is free: no index and no alias has it. */
function nameIsFree(record: IndexRecord): Deno.AtomicCheck[] {
  return [
    { key: indexKey(record.projectId, record.name), versionstamp: null },
    { key: aliasKey(record.projectId, record.name), versionstamp: null },
  ];
}
