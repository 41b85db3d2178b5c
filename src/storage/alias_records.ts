/** Aliases in Deno KV: another name of an index, swapped to another index in one atomic step. */
import type { IndexRecord } from "./index_records.ts";
import { aliasesPrefix, aliasKey, indexKey } from "./kv_keys.ts";
import type { RecordCache } from "./record_cache.ts";
import { whileBusy } from "./store_busy.ts";

/** An alias as stored. */
export interface AliasRecord {
  alias: string;
  indexName: string;
  updatedAt: string;
}

/**
 * Why an alias could not be set or deleted: its index is missing, an index has the alias's name, or the alias points
 * at an index that the caller may not move it from.
 */
export type AliasRefusal = "missing" | "shadows" | { from: string };

/** Whether the caller may move or delete an alias that points at the index `from`. */
export type MayLeave = (from: string) => boolean;

/**
 * Points `alias` at the index `indexName`, creating it or moving it in one commit, if `mayLeave` allows its present
 * index; the commit also rewrites the index's record unchanged, so that a `deleteIndex` that read no alias for it fails
 * its check and reads again.
 */
export async function setAliasRecord(
  kv: Deno.Kv,
  record: AliasRecord & { projectId: string },
  mayLeave: MayLeave,
): Promise<AliasRefusal | null> {
  const { projectId, alias, indexName, updatedAt } = record;
  for (;;) {
    const [target, shadowed, present] = await kv.getMany<[IndexRecord, IndexRecord, AliasRecord]>([
      indexKey(projectId, indexName),
      indexKey(projectId, alias),
      aliasKey(projectId, alias),
    ]);
    if (target.value === null) return "missing";
    if (shadowed.versionstamp !== null) return "shadows";
    if (present.value !== null && !mayLeave(present.value.indexName)) return { from: present.value.indexName };
    const result = await whileBusy(() =>
      kv.atomic().check(target).check(shadowed).check(present).set(target.key, target.value)
        .set(present.key, { alias, indexName, updatedAt } satisfies AliasRecord).commit()
    );
    if (result.ok) return null;
  }
}

/** Deletes an alias if `mayLeave` allows its index; false when there is none. */
export async function deleteAliasRecord(
  kv: Deno.Kv,
  { projectId, alias }: { projectId: string; alias: string },
  mayLeave: MayLeave,
): Promise<boolean | { from: string }> {
  for (;;) {
    const entry = await kv.get<AliasRecord>(aliasKey(projectId, alias));
    if (entry.value === null) return false;
    if (!mayLeave(entry.value.indexName)) return { from: entry.value.indexName };
    if ((await whileBusy(() => kv.atomic().check(entry).delete(entry.key).commit())).ok) return true;
  }
}

/** A project's aliases in name order. */
export async function listAliasRecords(kv: Deno.Kv, projectId: string): Promise<AliasRecord[]> {
  const aliases: AliasRecord[] = [];
  for await (const entry of kv.list<AliasRecord>({ prefix: aliasesPrefix(projectId) })) aliases.push(entry.value);
  return aliases;
}

/** The index that `name` is an alias of, read through the metadata cache; undefined when it is no alias. */
export async function resolveAlias(records: RecordCache, projectId: string, name: string): Promise<string | undefined> {
  return (await records.get<AliasRecord>(aliasKey(projectId, name)))?.indexName;
}
