/**
 * Index snapshots: opaque bytes (the search state at one revision), written as immutable chunks under a fresh version
 * id and made visible by one atomic swap of the index's snapshot pointer. Old versions are deleted after the swap.
 */
import { snapshotChunkKey, snapshotChunksPrefix, snapshotLeaseKey, snapshotPointerKey, trashKey } from "./kv_keys.ts";
import {
  commitInBatches,
  deleteTrees,
  firstOfGroups,
  MAX_BYTES_PER_COMMIT,
  MAX_CHUNK_BYTES,
  MAX_MUTATIONS_PER_COMMIT,
} from "./kv_batches.ts";
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

/** When a snapshot of which revision was swapped in, and how many bytes of log it covered beyond the one before. */
export interface SnapshotSwap {
  revision: number;
  at: number;
  /** Absent in swaps written before it was kept. */
  logBytes?: number;
}

/**
 * Swaps kept in a pointer's history: enough that the log they cover together outgrows the snapshot (each covers about
 * a tenth of it, see `SnapshotPolicy`), so that {@link truncatableRevision} can bound the log by the snapshot's size.
 */
const HISTORY_LENGTH = 16;
/** Log that stays readable for the whole retention time, however small the snapshot. */
const MIN_RETAINED_LOG_BYTES = 4 * 1024 * 1024;

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
   * and a large index's snapshot takes many commits.
   */
  pace?: () => Promise<void>;
  /**
   * The version of a snapshot that could not be read (of an older format): this one replaces it even at the same
   * revision, where a snapshot is otherwise refused as not newer.
   */
  replaces?: string | undefined;
  /** Bytes of log that this snapshot covers beyond the current one, as far as the writer counted them. */
  logBytes?: number;
}

/** A snapshot as it is read: its pointer, and its bytes in chunks as they arrive. */
export interface SnapshotStream {
  pointer: SnapshotPointer;
  chunks: AsyncIterable<Uint8Array>;
}

/** Thrown by a snapshot's chunks when one is missing: its version was replaced, and its chunks are being deleted. */
export class SnapshotReplacedError extends Error {}

/** A snapshot to write: the revision it shows, and its bytes in pieces of any size, e.g. as they are encoded. */
export interface SnapshotSource {
  revision: number;
  pieces: AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
}

/**
 * Stores a snapshot of an index unless it already has one as recent, or the index has been deleted; returns its pointer
 * when it became the current one, or null. The pieces are stored as they come, so that a large snapshot is never held
 * whole; if they fail, what was stored of them is deleted.
 */
export async function writeSnapshot(
  kv: Deno.Kv,
  indexId: string,
  snapshot: SnapshotSource,
  options: SnapshotWriteOptions = {},
): Promise<SnapshotPointer | null> {
  const versionId = newTimedId();
  let chunks = 0;
  let bytes = 0;
  // One commit's chunks, gathered in one buffer that is filled again once they are committed.
  const batch = new Uint8Array(CHUNKS_PER_COMMIT * MAX_CHUNK_BYTES);
  let filled = 0;
  const commit = async () => {
    const mutations: Deno.KvMutation[] = [];
    for (let at = 0; at < filled; at += MAX_CHUNK_BYTES) {
      const value = batch.subarray(at, Math.min(at + MAX_CHUNK_BYTES, filled));
      mutations.push({ type: "set", key: snapshotChunkKey(indexId, versionId, chunks++), value });
    }
    // Deno KV has copied the values once the commit is done.
    await commitInBatches(kv, mutations);
    bytes += filled;
    filled = 0;
    await options.pace?.();
  };
  try {
    for await (const piece of snapshot.pieces) {
      for (let at = 0; at < piece.byteLength;) {
        const taken = Math.min(batch.byteLength - filled, piece.byteLength - at);
        batch.set(piece.subarray(at, at + taken), filled);
        filled += taken;
        at += taken;
        if (filled === batch.byteLength) await commit();
      }
    }
    if (filled > 0) await commit();
  } catch (error) {
    await deleteChunks(kv, indexId, versionId, chunks);
    throw error;
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
    bytes,
    history: [...earlier, {
      revision: snapshot.revision,
      at: options.now ?? Date.now(),
      logBytes: options.logBytes ?? 0,
    }].slice(-HISTORY_LENGTH),
  };
  const newer = (previous.value?.revision ?? -1) < snapshot.revision ||
    (options.replaces !== undefined && previous.value?.versionId === options.replaces);
  const swap = kv.atomic().check(previous, { key: trashKey(indexId), versionstamp: null }).set(pointerKey, pointer);
  if (options.lease !== undefined) swap.check(options.lease).delete(options.lease.key);
  const result = newer ? await swap.commit() : { ok: false };
  const obsolete = result.ok ? previous.value : pointer;
  if (obsolete !== null) await deleteChunks(kv, indexId, obsolete.versionId, obsolete.chunks, options.pace);
  if (result.ok) await deleteAbandonedVersions(kv, indexId, versionId);
  return result.ok ? pointer : null;
}

/** Chunks of a snapshot per commit, within its byte budget with room for their keys. */
const CHUNKS_PER_COMMIT = Math.floor(MAX_BYTES_PER_COMMIT / (MAX_CHUNK_BYTES + 1024));

/**
 * Deletes a version's chunks by their keys, `count` of them, without reading them (a listing reads the values too: all
 * of a snapshot's bytes), then by listing what is left, should the count fall short.
 */
async function deleteChunks(
  kv: Deno.Kv,
  indexId: string,
  versionId: string,
  count: number,
  pace?: () => Promise<void>,
): Promise<void> {
  for (let first = 0; first < count; first += MAX_MUTATIONS_PER_COMMIT) {
    const mutations = Array.from({ length: Math.min(MAX_MUTATIONS_PER_COMMIT, count - first) }, (_, i) => ({
      type: "delete" as const,
      key: snapshotChunkKey(indexId, versionId, first + i),
    }));
    await commitInBatches(kv, mutations);
    await pace?.();
  }
  await deleteTrees(kv, [snapshotChunksPrefix(indexId, versionId)], pace);
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
 * The revision up to which the change log may be deleted at `now`: that of the newest snapshot swapped in at least
 * `retentionMs` ago, or after which later snapshots covered more log than the current snapshot's size (and
 * {@link MIN_RETAINED_LOG_BYTES}); 0 when there is none. A process that was current within the window catches up from
 * the log alone, unless it would replay more than a snapshot's bytes, when reloading the snapshot costs less. So the log
 * stays about the snapshot's size however many writes pass through the index.
 */
export function truncatableRevision(pointer: SnapshotPointer | null, now: number, retentionMs: number): number {
  if (pointer === null) return 0;
  const history = pointer.history ?? [{ revision: pointer.revision, at: 0 }];
  const bound = Math.max(pointer.bytes, MIN_RETAINED_LOG_BYTES);
  let laterLogBytes = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    const swap = history[i]!;
    if (swap.at <= now - retentionMs || laterLogBytes >= bound) return swap.revision;
    laterLogBytes += swap.logBytes ?? 0;
  }
  return 0;
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

/**
 * Reads an index's current snapshot by `read`, which is handed its chunks as they arrive, so that a large snapshot is
 * never held whole; returns what `read` returns, or null when the index has no snapshot. `known` is its pointer when
 * the caller has just read it. The chunks are listed by ranges of their keys, which return them in order and several
 * times faster than `getMany` of 10 keys at a time, even with several calls in flight; the next range is read while
 * `read` decodes one. A snapshot replaced (and its chunks deleted) during the read is read again, by `read` again, at
 * its new version.
 */
export async function readSnapshot<T>(
  kv: Deno.Kv,
  indexId: string,
  read: (snapshot: SnapshotStream) => Promise<T>,
  known?: SnapshotPointer | null,
): Promise<T | null> {
  for (let attempt = 0;; attempt++) {
    const pointer = attempt === 0 && known !== undefined ? known : await readSnapshotPointer(kv, indexId);
    if (pointer === null) return null;
    try {
      return await read({ pointer, chunks: listChunks(kv, indexId, pointer) });
    } catch (error) {
      if (!(error instanceof SnapshotReplacedError) || attempt === 2) throw error;
    }
  }
}

/** Chunks per store read: the next read is under way while a reader decodes these. */
const CHUNKS_PER_READ = 100;

/**
 * A version's chunks in order, read a range at a time with the next range under way meanwhile; throws
 * {@link SnapshotReplacedError} on reaching a chunk that is gone.
 */
async function* listChunks(kv: Deno.Kv, indexId: string, pointer: SnapshotPointer): AsyncGenerator<Uint8Array> {
  const read = (first: number) => {
    const end = Math.min(first + CHUNKS_PER_READ, pointer.chunks);
    const range = {
      start: snapshotChunkKey(indexId, pointer.versionId, first),
      end: snapshotChunkKey(indexId, pointer.versionId, end),
    };
    const entries = Array.fromAsync(kv.list<Uint8Array>(range, { batchSize: CHUNKS_PER_READ }));
    // Awaited below, unless the reader stops first: then its failure is of no interest.
    entries.catch(() => {});
    return entries;
  };
  let next = read(0);
  for (let first = 0; first < pointer.chunks; first += CHUNKS_PER_READ) {
    const entries = await next;
    if (first + CHUNKS_PER_READ < pointer.chunks) next = read(first + CHUNKS_PER_READ);
    const expected = Math.min(CHUNKS_PER_READ, pointer.chunks - first);
    if (entries.length !== expected || entries.some((entry, i) => entry.key.at(-1) !== first + i)) {
      throw new SnapshotReplacedError(
        `Snapshot version "${pointer.versionId}" of index "${indexId}" has missing chunks`,
      );
    }
    for (const entry of entries) yield entry.value;
  }
}
