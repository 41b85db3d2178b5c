/**
 * Index snapshots: opaque bytes (the search state at one revision), written as immutable chunks under a fresh version
 * id and made visible by one atomic swap of the index's snapshot pointer. Old versions are deleted after the swap.
 */
import { snapshotChunkKey, snapshotChunksPrefix, snapshotPointerKey, trashKey } from "./kv_keys.ts";
import { chunkBytes, commitInBatches, deleteTrees, readChunks } from "./kv_batches.ts";
import { concatBytes } from "../concat_bytes.ts";

/** The pointer to one snapshot version and the index revision it shows. */
export interface SnapshotPointer {
  versionId: string;
  revision: number;
  chunks: number;
  bytes: number;
}

/** A snapshot: the revision it shows and its bytes. */
export interface Snapshot {
  revision: number;
  bytes: Uint8Array;
}

/**
 * Stores a snapshot of an index unless it already has one as recent, or the index has been deleted; returns whether
 * it became the current one.
 */
export async function writeSnapshot(kv: Deno.Kv, indexId: string, snapshot: Snapshot): Promise<boolean> {
  const chunks = chunkBytes(snapshot.bytes);
  const versionId = crypto.randomUUID();
  await commitInBatches(
    kv,
    chunks.map((value, seq) => ({ type: "set", key: snapshotChunkKey(indexId, versionId, seq), value })),
  );
  const pointerKey = snapshotPointerKey(indexId);
  const previous = await kv.get<SnapshotPointer>(pointerKey);
  const pointer: SnapshotPointer = {
    versionId,
    revision: snapshot.revision,
    chunks: chunks.length,
    bytes: snapshot.bytes.byteLength,
  };
  const newer = (previous.value?.revision ?? -1) < snapshot.revision;
  const result = newer
    ? await kv.atomic().check(previous, { key: trashKey(indexId), versionstamp: null }).set(pointerKey, pointer)
      .commit()
    : { ok: false };
  const obsolete = result.ok ? previous.value?.versionId : versionId;
  if (obsolete !== undefined) await deleteTrees(kv, [snapshotChunksPrefix(indexId, obsolete)]);
  return result.ok;
}

/** Reads the pointer of an index's current snapshot, or null when it has none. */
export async function readSnapshotPointer(kv: Deno.Kv, indexId: string): Promise<SnapshotPointer | null> {
  return (await kv.get<SnapshotPointer>(snapshotPointerKey(indexId))).value;
}

/** Reads an index's current snapshot, or null when it has none. */
export async function readSnapshot(kv: Deno.Kv, indexId: string): Promise<Snapshot | null> {
  const pointer = await readSnapshotPointer(kv, indexId);
  if (pointer === null) return null;
  const { versionId, revision, chunks } = pointer;
  const keys = Array.from({ length: chunks }, (_, seq) => snapshotChunkKey(indexId, versionId, seq));
  const parts = await readChunks(kv, keys);
  if (parts === null) throw new Error(`Snapshot version "${versionId}" of index "${indexId}" has missing chunks`);
  return { revision, bytes: concatBytes(parts) };
}
