/** Splits work into commits that respect Deno KV's limits on one atomic operation. */
import { concatBytes } from "../util/concat_bytes.ts";

/** Deno KV allows 1000 mutations and 800 KiB per commit; stay well below both. */
export const MAX_MUTATIONS_PER_COMMIT = 500;
/** The byte budget of one commit, leaving room for keys and checks. */
export const MAX_BYTES_PER_COMMIT = 600 * 1024;
/** Deno KV allows 64 KiB per value; chunks stay below it. */
export const MAX_CHUNK_BYTES = 60 * 1024;

/** A rough upper bound of a mutation's size as Deno KV counts it. */
export function mutationBytes(mutation: Deno.KvMutation): number {
  const keyBytes = mutation.key.reduce<number>((sum, part) => sum + String(part).length * 3 + 8, 0);
  if (mutation.type !== "set") return keyBytes;
  return keyBytes + valueBytes(mutation.value);
}

function valueBytes(value: unknown): number {
  if (value instanceof Uint8Array) return value.byteLength + 16;
  if (typeof value === "string") return value.length * 2 + 16;
  if (typeof value === "object" && value !== null) {
    let sum = 16;
    for (const [key, inner] of Object.entries(value)) sum += key.length * 2 + valueBytes(inner);
    return sum;
  }
  return 16;
}

/** Groups mutations into batches that each fit one commit. */
export function batchMutations(mutations: Deno.KvMutation[], reserveBytes = 0): Deno.KvMutation[][] {
  const batches: Deno.KvMutation[][] = [];
  let current: Deno.KvMutation[] = [];
  let bytes = reserveBytes;
  for (const mutation of mutations) {
    const size = mutationBytes(mutation);
    if (current.length > 0 && (current.length >= MAX_MUTATIONS_PER_COMMIT || bytes + size > MAX_BYTES_PER_COMMIT)) {
      batches.push(current);
      current = [];
      bytes = reserveBytes;
    }
    current.push(mutation);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/** Commits `mutations` in as many bounded commits as they need, each one guarded by `checks`. */
export async function commitInBatches(
  kv: Deno.Kv,
  mutations: Deno.KvMutation[],
  checks: Deno.AtomicCheck[] = [],
): Promise<boolean> {
  for (const batch of batchMutations(mutations)) {
    const result = await kv.atomic().check(...checks).mutate(...batch).commit();
    if (!result.ok) return false;
  }
  return true;
}

/** Deletes each key and every key under it, in bounded commits, awaiting `pace` after each. */
export async function deleteTrees(kv: Deno.Kv, prefixes: Deno.KvKey[], pace?: () => Promise<void>): Promise<void> {
  for (const prefix of prefixes) {
    let batch: Deno.KvMutation[] = [];
    for await (const entry of kv.list({ prefix }, { batchSize: MAX_MUTATIONS_PER_COMMIT })) {
      batch.push({ type: "delete", key: entry.key });
      if (batch.length >= MAX_MUTATIONS_PER_COMMIT) {
        await commitInBatches(kv, batch);
        await pace?.();
        batch = [];
      }
    }
    await commitInBatches(kv, batch);
    await kv.delete(prefix);
  }
}

/**
 * The first entry of each group under `prefix`, a group being the keys that share the string after it: one read per
 * group, however many keys it holds, so that listing the versions of large snapshots does not read their chunks.
 */
export async function* firstOfGroups<T>(kv: Deno.Kv, prefix: Deno.KvKey): AsyncGenerator<Deno.KvEntry<T>> {
  let start: Deno.KvKey | undefined;
  for (;;) {
    const selector = start === undefined ? { prefix } : { prefix, start };
    const [entry] = await Array.fromAsync(kv.list<T>(selector, { limit: 1 }));
    if (entry === undefined) return;
    yield entry;
    // The smallest key after every key of this group: its id followed by the lowest character.
    start = [...prefix, `${String(entry.key[prefix.length])}\0`];
  }
}

/** Bytes cut into copies of at most {@link MAX_CHUNK_BYTES}, each of which fits one KV value; none for no bytes. */
export function byteChunks(bytes: Uint8Array): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.byteLength; offset += MAX_CHUNK_BYTES) {
    chunks.push(bytes.slice(offset, offset + MAX_CHUNK_BYTES));
  }
  return chunks;
}

/** Writes bytes as chunks that each fit one KV value, under `keyOf(seq)`, in bounded commits; returns how many. */
export async function writeChunks(kv: Deno.Kv, bytes: Uint8Array, keyOf: (seq: number) => Deno.KvKey): Promise<number> {
  const mutations = byteChunks(bytes).map((value, seq): Deno.KvMutation => ({ type: "set", key: keyOf(seq), value }));
  await commitInBatches(kv, mutations);
  return mutations.length;
}

/** Deno KV reads at most this many keys in one `getMany`. */
const MAX_KEYS_PER_READ = 10;

/**
 * Reads `keys` in `getMany` calls of as many keys as Deno KV allows, `parallel` calls at a time. `onGroup` hears each
 * group's entries and the position of its first key, in no particular order; once it returns false, no further group
 * is read.
 */
export async function readInGroups<T>(
  kv: Deno.Kv,
  keys: Deno.KvKey[],
  onGroup: (entries: Deno.KvEntryMaybe<T>[], first: number) => boolean | void,
  parallel = 1,
): Promise<void> {
  let next = 0;
  let stopped = false;
  const reader = async () => {
    while (!stopped && next < keys.length) {
      const first = next;
      next += MAX_KEYS_PER_READ;
      const entries = await kv.getMany<T[]>(keys.slice(first, first + MAX_KEYS_PER_READ));
      if (!stopped && onGroup(entries, first) === false) stopped = true;
    }
  };
  await Promise.all(Array.from({ length: parallel }, reader));
}

/** Reads and joins the `count` chunks that {@link writeChunks} wrote; null when any is missing. */
export async function readChunks(
  kv: Deno.Kv,
  count: number,
  keyOf: (seq: number) => Deno.KvKey,
): Promise<Uint8Array | null> {
  const chunks: Uint8Array[] = [];
  let complete = true;
  await readInGroups<Uint8Array>(kv, Array.from({ length: count }, (_, seq) => keyOf(seq)), (entries) => {
    for (const entry of entries) {
      if (entry.value === null) return complete = false;
      chunks.push(entry.value);
    }
  });
  return complete ? concatBytes(chunks) : null;
}
