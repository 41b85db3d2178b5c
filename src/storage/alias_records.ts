/** Aliases in Deno KV: another name of an index, swapped to another index in one atomic step. */
import type { IndexRecord } from "./index_records.ts";
import { aliasesPrefix, aliasKey, indexKey } from "./kv_keys.ts";
import type { RecordCache } from "./record_cache.ts";

/** An alias as stored. */
export interface AliasRecord {
  alias: string;
  indexName: string;
  updatedAt: string;
}

/** Why an alias could not be set: its index is missing, or an index has the alias's name. */
export type AliasRefusal = "missing" | "shadows";

/**
 * Points `alias` at the index `indexName`, creating it or moving it in one commit; the commit also rewrites the index's
 * record unchanged, so that a `deleteIndex` that read no alias for it fails its check and reads again.
 */
export async function setAliasRecord(
  kv: Deno.Kv,
  record: AliasRecord & { projectId: string },
): Promise<AliasRefusal | null> {
  const { projectId, alias, indexName, updatedAt } = record;
  for (;;) {
    const [target, shadowed] = await kv.getMany<[IndexRecord, IndexRecord]>([
      indexKey(projectId, indexName),
      indexKey(projectId, alias),
    ]);
    if (target.value === null) return "missing";
    if (shadowed.versionstamp !== null) return "shadows";
    const result = await kv.atomic().check(target).check(shadowed).set(target.key, target.value)
      .set(aliasKey(projectId, alias), { alias, indexName, updatedAt } satisfies AliasRecord).commit();
    if (result.ok) return null;
  }
}

/** Deletes an alias; false when there is none. */
export async function deleteAliasRecord(kv: Deno.Kv, projectId: string, alias: string): Promise<boolean> {
  for (;;) {
    const entry = await kv.get<AliasRecord>(aliasKey(projectId, alias));
    if (entry.value === null) return false;
    if ((await kv.atomic().check(entry).delete(entry.key).commit()).ok) return true;
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
