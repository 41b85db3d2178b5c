/**
 * The store's format version. One marker versions the layout of every record in the store (snapshots and change-log
 * entries carry their own formats too): a store from an earlier release is migrated forward at start, and one from a
 * newer release is refused, never rewritten.
 *
 * Formats:
 * 1. Before the marker: projects, indexes, documents, the change log, snapshots, jobs, scoped keys, idempotency keys.
 * 2. Aliases and deleted indexes kept for `restoreIndex` (an older release would ignore an alias and collect a deleted
 *    index's snapshot), index settings (synonyms and pins, which an older release would neither apply nor collect),
 *    webhook outbox and secrets, backups' lease.
 * 3. Indexes from a project key's hash to its project and from a public key's id to its project, so that a request's
 *    credential is checked before its body is read (an older release would not keep them up to date), and search
 *    analytics heads that name their index's creation (an older release would read the days of every index of a name
 *    as one index's).
 */
import { apiKeysPrefix, projectKeyHashKey, projectsPrefix, publicKeyProjectKey, storeFormatKey } from "./kv_keys.ts";
import type { ProjectRecord } from "./project_records.ts";
import type { ApiKeyRecord } from "./api_key_records.ts";
import { whileBusy } from "./store_busy.ts";

/** The format this release writes and reads, with every earlier one. */
export const STORE_FORMAT_VERSION = 3;

/** A store written by a newer release than this one. */
export class NewerStoreError extends Error {
  constructor(readonly found: number) {
    super(
      `The store is format ${found}, written by a newer quire; this release reads formats up to ${STORE_FORMAT_VERSION}. ` +
        "Run the newer release, or restore a backup made by this one: the store was left as it is",
    );
    this.name = "NewerStoreError";
  }
}

/**
 * Checks the store's format and brings an older store forward to {@link STORE_FORMAT_VERSION}; a new store is marked with it.
 * Throws {@link NewerStoreError}, writing nothing, for a store of a newer format.
 */
export function upgradeStoreFormat(kv: Deno.Kv): Promise<{ from: number | null; to: number }> {
  // Processes started together (`PROCESSES`) all check at once: one commits, and the others meet its lock.
  return whileBusy(() => upgradeOnce(kv));
}

async function upgradeOnce(kv: Deno.Kv): Promise<{ from: number | null; to: number }> {
  for (;;) {
    const entry = await kv.get<number>(storeFormatKey());
    if (entry.value !== null && entry.value > STORE_FORMAT_VERSION) throw new NewerStoreError(entry.value);
    if (entry.value === STORE_FORMAT_VERSION) return { from: STORE_FORMAT_VERSION, to: STORE_FORMAT_VERSION };
    // No marker: a new store, or one of format 1, which had none.
    const from = entry.value ?? (await isEmpty(kv) ? null : 1);
    // From 1 to 2 nothing is rewritten: format 2 adds key spaces, and every record of format 1 reads as it is. Format 3
    // adds indexes of the credentials; writing them twice (processes that start together) writes the same.
    if (from !== null && from < 3) await indexCredentials(kv);
    const result = await kv.atomic().check(entry).set(storeFormatKey(), STORE_FORMAT_VERSION).commit();
    if (result.ok) return { from, to: STORE_FORMAT_VERSION };
  }
}

/** Writes the index entries of format 3 for every project key and every registered public key. */
async function indexCredentials(kv: Deno.Kv): Promise<void> {
  for await (const project of kv.list<ProjectRecord>({ prefix: projectsPrefix() })) {
    const { id, keyHash } = project.value;
    await kv.set(projectKeyHashKey(keyHash), id);
    for await (const key of kv.list<ApiKeyRecord>({ prefix: apiKeysPrefix(id) })) {
      if (key.value.publicKey !== undefined) await kv.set(publicKeyProjectKey(key.value.id), id);
    }
  }
}

async function isEmpty(kv: Deno.Kv): Promise<boolean> {
  for await (const _ of kv.list({ prefix: projectsPrefix() }, { limit: 1 })) return false;
  return true;
}
