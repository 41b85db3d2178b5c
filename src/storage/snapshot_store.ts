/**
 * Index snapshots: opaque bytes (the search state at one revision), written as immutable chunks under a fresh version
 * id and made visible by one atomic swap of the index's snapshot pointer. Old versions are deleted after the swap.
 */
import { snapshotChunkKey, snapshotChunksPrefix, snapshotLeaseKey, snapshotPointerKey, trashKey } from "./kv_keys.ts";
import { commitInBatches, deleteTrees, firstOfGroups, MAX_CHUNK_BYTES, readInGroups } from "./kv_batches.ts";
import { isAbandoned, newTimedId } from "./timed_id.ts";

/** The pointer to one snapshot version and the index revision it shows. */
export interface SnapshotPointer {
  versionId: string;
  revision: number;
  chunks: number;
  bytes: number;
  /** The latest swaps, oldest first, this one last; absent in pointers written before it was kept. */
  history?: SnapshotSwap[];
}

/** When a snapshot of which revision was swapped in. */
export interface SnapshotSwap {
  revision: number;
  at: number;
}

/** Swaps kept in a pointer's history. */
const HISTORY_LENGTH = 8;

/** Who may write an index's next snapshot, until when. */
export interface SnapshotLease {
  owner: string;
  until: number;
}

/** Options of {@link writeSnapshot}. */
export interface SnapshotWriteOptions {
  /** The lease taken for this write: the swap happens only while it is unchanged, and releases it. */
  lease?: Deno.KvEntry<SnapshotLease>;
  now?: number;
  /**
   * Awaited after each commit, e.g. to give requests' store reads room: a store answers one commit or read at a time,
   * and a snapshot of 100,000 documents is some 350 commits.
   */
  pace?: () => Promise<void>;
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
export async function writeSnapshot(
  kv: Deno.Kv,
  indexId: string,
  snapshot: Snapshot,
  options: SnapshotWriteOptions = {},
): Promise<boolean> {
  const versionId = newTimedId();
  const chunks = Math.ceil(snapshot.bytes.byteLength / MAX_CHUNK_BYTES);
  // Ten chunks per commit, each copied only when its commit is built, so that a large snapshot is not held twice.
  for (let first = 0; first < chunks; first += 10) {
    const mutations: Deno.KvMutation[] = [];
    for (let seq = first; seq < Math.min(first + 10, chunks); seq++) {
      const value = snapshot.bytes.slice(seq * MAX_CHUNK_BYTES, (seq + 1) * MAX_CHUNK_BYTES);
      mutations.push({ type: "set", key: snapshotChunkKey(indexId, versionId, seq), value });
    }
    await commitInBatches(kv, mutations);
    await options.pace?.();
  }
  const pointerKey = snapshotPointerKey(indexId);
  const previous = await kv.get<SnapshotPointer>(pointerKey);
  // A pointer from before histories were kept counts as swapped long ago.
  const earlier = previous.value === null
    ? []
    : previous.value.history ?? [{ revision: previous.value.revision, at: 0 }];
  const pointer: SnapshotPointer = {
    versionId,
    revision: snapshot.revision,
    chunks,
    bytes: snapshot.bytes.byteLength,
    history: [...earlier, { revision: snapshot.revision, at: options.now ?? Date.now() }].slice(-HISTORY_LENGTH),
  };
  const newer = (previous.value?.revision ?? -1) < snapshot.revision;
  const swap = kv.atomic().check(previous, { key: trashKey(indexId), versionstamp: null }).set(pointerKey, pointer);
  if (options.lease !== undefined) swap.check(options.lease).delete(options.lease.key);
  const result = newer ? await swap.commit() : { ok: false };
  const obsolete = result.ok ? previous.value?.versionId : versionId;
  if (obsolete !== undefined) await deleteTrees(kv, [snapshotChunksPrefix(indexId, obsolete)], options.pace);
  if (result.ok) await deleteAbandonedVersions(kv, indexId, versionId);
  return result.ok;
}

/**
 * Deletes the chunks of abandoned versions other than `current`: left by a process killed between writing a version
 * and swapping it in, or between the swap and deleting the old one. Younger ones may still be on their way in from
 * another process.
 */
export async function deleteAbandonedVersions(
  kv: Deno.Kv,
  indexId: string,
  current: string | undefined,
  now = Date.now(),
): Promise<void> {
  const abandoned = new Set<string>();
  for await (const { key } of firstOfGroups(kv, snapshotChunksPrefix(indexId))) {
    const versionId = key[2] as string;
    if (versionId !== current && isAbandoned(versionId, now)) abandoned.add(versionId);
  }
  await deleteTrees(kv, [...abandoned].map((versionId) => snapshotChunksPrefix(indexId, versionId)));
}

/**
 * The revision up to which the change log may be deleted at `now`, so that it stays readable for `retentionMs`: that
 * of the newest snapshot swapped in at least that long ago (0 when none was). A process that was current within the
 * window holds a revision at least that high, so it catches up from the log alone.
 */
export function truncatableRevision(pointer: SnapshotPointer | null, now: number, retentionMs: number): number {
  const history = pointer === null ? [] : pointer.history ?? [{ revision: pointer.revision, at: 0 }];
  let revision = 0;
  for (const swap of history) if (swap.at <= now - retentionMs) revision = Math.max(revision, swap.revision);
  return revision;
}

/**
 * Takes the lease on writing an index's next snapshot for `ms`, unless another owner holds a lease that has not
 * expired; returns the lease entry, to pass to {@link writeSnapshot}, or null.
 */
export async function takeSnapshotLease(
  kv: Deno.Kv,
  indexId: string,
  owner: string,
  options: { ms: number; now?: number },
): Promise<Deno.KvEntry<SnapshotLease> | null> {
  const now = options.now ?? Date.now();
  const key = snapshotLeaseKey(indexId);
  const current = await kv.get<SnapshotLease>(key);
  if (current.value !== null && current.value.owner !== owner && current.value.until > now) return null;
  const lease: SnapshotLease = { owner, until: now + options.ms };
  const result = await kv.atomic().check(current).set(key, lease).commit();
  return result.ok ? { key, value: lease, versionstamp: result.versionstamp } : null;
}

/** Reads the pointer of an index's current snapshot, or null when it has none. */
export async function readSnapshotPointer(kv: Deno.Kv, indexId: string): Promise<SnapshotPointer | null> {
  return (await kv.get<SnapshotPointer>(snapshotPointerKey(indexId))).value;
}

/** `getMany` calls in flight while a snapshot loads. */
const PARALLEL_READS = 4;

/**
 * Reads an index's current snapshot, or null when it has none; `known` is its pointer when the caller has just read it.
 * Chunks are copied into one buffer of the size the pointer names as they arrive, so that a large snapshot is held once,
 * not twice. A snapshot replaced (and its chunks deleted) during the read is read again at its new version.
 */
export async function readSnapshot(
  kv: Deno.Kv,
  indexId: string,
  known?: SnapshotPointer | null,
): Promise<Snapshot | null> {
  for (let attempt = 0;; attempt++) {
    const pointer = attempt === 0 && known !== undefined ? known : await readSnapshotPointer(kv, indexId);
    if (pointer === null) return null;
    const bytes = await readSnapshotBytes(kv, indexId, pointer);
    if (bytes !== null) return { revision: pointer.revision, bytes };
    if (attempt === 2) {
      throw new Error(`Snapshot version "${pointer.versionId}" of index "${indexId}" has missing chunks`);
    }
  }
}

async function readSnapshotBytes(kv: Deno.Kv, indexId: string, pointer: SnapshotPointer): Promise<Uint8Array | null> {
  const bytes = new Uint8Array(pointer.bytes);
  const keys = Array.from({ length: pointer.chunks }, (_, seq) => snapshotChunkKey(indexId, pointer.versionId, seq));
  let complete = true;
  await readInGroups<Uint8Array>(kv, keys, (entries, first) => {
    entries.forEach((entry, i) => {
      if (entry.value === null) complete = false;
      else bytes.set(entry.value, (first + i) * MAX_CHUNK_BYTES);
    });
    return complete;
  }, PARALLEL_READS);
  return complete ? bytes : null;
}
