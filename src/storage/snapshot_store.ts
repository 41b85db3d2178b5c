/**
 * Index snapshots: the whole index in the compact binary change format, written as immutable chunks under a fresh
 * version id and made visible by one atomic swap of the index's snapshot pointer. Old versions are deleted after the
 * swap.
 */
import { type DocChange, listDocs } from "./doc_records.ts";
import { decodeDocChanges, encodeDocChanges } from "./doc_change_codec.ts";
import type { IndexRecord } from "./index_records.ts";
import { snapshotChunkKey, snapshotChunksPrefix, snapshotPointerKey } from "./kv_keys.ts";
import { chunkBytes, commitInBatches, deleteTrees, readChunks } from "./kv_batches.ts";
import { concatBytes } from "../concat_bytes.ts";

/** The pointer to one snapshot version and the index revision it shows. */
export interface SnapshotPointer {
  versionId: string;
  revision: number;
  chunks: number;
  bytes: number;
}

/** A snapshot read back: the revision it shows and every document at that revision. */
export interface Snapshot {
  revision: number;
  docs: DocChange[];
}

/**
 * Writes a snapshot of the index behind `entry`. Returns false, leaving nothing behind, when the index changed while
 * the snapshot was being taken.
 */
export async function writeSnapshot(kv: Deno.Kv, entry: Deno.KvEntry<IndexRecord>): Promise<boolean> {
  const indexId = entry.value.id;
  const docs: DocChange[] = [];
  for await (const [id, doc] of listDocs(kv, indexId)) docs.push({ id, doc, previousParts: 0 });
  const bytes = encodeDocChanges(docs);
  const chunks = chunkBytes(bytes);
  const versionId = crypto.randomUUID();
  await commitInBatches(
    kv,
    chunks.map((value, seq) => ({ type: "set", key: snapshotChunkKey(indexId, versionId, seq), value })),
  );
  const pointerKey = snapshotPointerKey(indexId);
  const previous = await kv.get<SnapshotPointer>(pointerKey);
  const pointer: SnapshotPointer = {
    versionId,
    revision: entry.value.revision,
    chunks: chunks.length,
    bytes: bytes.byteLength,
  };
  const result = await kv.atomic().check(entry, previous).set(pointerKey, pointer).commit();
  const obsolete = result.ok ? previous.value?.versionId : versionId;
  if (obsolete !== undefined) await deleteTrees(kv, [snapshotChunksPrefix(indexId, obsolete)]);
  return result.ok;
}

/** Reads an index's current snapshot, or null when it has none. */
export async function readSnapshot(kv: Deno.Kv, indexId: string): Promise<Snapshot | null> {
  const pointer = await kv.get<SnapshotPointer>(snapshotPointerKey(indexId));
  if (pointer.value === null) return null;
  const { versionId, revision, chunks } = pointer.value;
  const keys = Array.from({ length: chunks }, (_, seq) => snapshotChunkKey(indexId, versionId, seq));
  const parts = await readChunks(kv, keys);
  if (parts === null) throw new Error(`Snapshot version "${versionId}" of index "${indexId}" has missing chunks`);
  return { revision, docs: decodeDocChanges(concatBytes(parts)) };
}
