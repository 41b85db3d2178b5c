/**
 * The index a request names, through aliases, and whether the caller's scope allows the request on it. An alias is
 * resolved through the metadata cache, so that a swap reaches every instance within `METADATA_CACHE_MS`.
 */
import { resolveAlias } from "../storage/alias_records.ts";
import type { RecordCache } from "../storage/record_cache.ts";
import { type Access, checkAccess } from "./access.ts";

/** The actions whose `indexName` may be an alias: those of an existing index. */
const ALIASED_ACTIONS: readonly string[] = [
  "getIndex",
  "deleteIndex",
  "addDocs",
  "deleteDocs",
  "getDocs",
  "search",
  "reembedIndex",
  "exportIndex",
  "updateSettings",
  "searchAnalytics",
  "recordClick",
];

/**
 * The actions that a scope covering only an alias may run through it: reads, so that a key scoped to an alias follows
 * its swaps (blue-green). Every other action through an alias needs the scope to cover the index it points at too.
 */
const READS_THROUGH_ALIAS: readonly string[] = [
  "getIndex",
  "getDocs",
  "search",
  "exportIndex",
  "searchAnalytics",
  "recordClick",
];

/** The longest index name or alias, in UTF-16 code units (as `indexName` is validated). */
const MAX_NAME_LENGTH = 256;

/** What a request's body names, before validation. */
export interface NamedRequest {
  action: string;
  projectId: string;
  indexName?: unknown;
  alias?: unknown;
}

/** The names of a request's index: as requested, then the index an alias points at. */
export interface IndexNames {
  names: string[];
  /** The index an alias named in the request points at. */
  target?: string;
}

/** Resolves the request's index name, and throws 403 unless `access` allows the request on it (and on its alias). */
export async function authorizeRequest(records: RecordCache, access: Access, body: NamedRequest): Promise<IndexNames> {
  const named = typeof body.indexName === "string" ? body.indexName : undefined;
  // A name longer than any index's or alias's is no alias (nor would it fit in a store key): validation refuses it.
  const target = named !== undefined && named.length <= MAX_NAME_LENGTH && ALIASED_ACTIONS.includes(body.action)
    ? await resolveAlias(records, body.projectId, named)
    : undefined;
  const names = named === undefined ? [] : target === undefined ? [named] : [named, target];
  checkAccess(access, body.action, names);
  if (target !== undefined && !READS_THROUGH_ALIAS.includes(body.action)) checkAccess(access, body.action, [target]);
  // An alias being set or deleted is a name in the scope too.
  if (typeof body.alias === "string") checkAccess(access, body.action, [body.alias]);
  return target === undefined ? { names } : { names, target };
}
