/** What one authenticated request may do: its key's scope, and a tenant token's filters. */
import { ApiError } from "../api/api_error.ts";
import type { MetadataFilter } from "../search/metadata_filter.ts";
import { allowsAction, allowsIndex, type KeyScope, NAMED_ONLY_ACTIONS, patternMatches } from "./key_scope.ts";

/** A tenant token's filter over the documents of the indexes that `pattern` matches. */
export interface TenantFilter {
  pattern: string;
  filter: MetadataFilter | undefined;
}

/** The rights of one request's credential. */
export interface Access {
  /** The scoped key or the tenant token's registered key; null for the project key. */
  keyId: string | null;
  scope: KeyScope;
  /** A tenant token's filters by index pattern; absent for a key. */
  tenantFilters?: readonly TenantFilter[];
  /** The key or token presented, which tells callers apart and seals their idempotent answers. */
  credential: string;
}

/**
 * The actions a tenant token that carries any filter may use: reads that apply its filter, and `recordClick`, which
 * reaches no document. Any other would reach documents, keys or other tenants' queries outside it.
 */
const FILTERED_TOKEN_ACTIONS: readonly string[] = [
  "search",
  "multiSearch",
  "getDocs",
  "getIndex",
  "listIndexes",
  "recordClick",
];

/**
 * Throws 403 unless `access` allows `action` on the index that `names` name: the name as requested, and for an alias
 * the index it points at; either name may be in the scope. The answer is the same whether or not the index exists.
 */
export function checkAccess(access: Access, action: string, names: readonly string[]): void {
  checkAction(access, action);
  const indexName = names[0];
  if (indexName === undefined) return;
  if (!names.some((name) => allowsIndex(access.scope, name))) {
    throw new ApiError(403, `${holderOf(access)} may not use index "${indexName}"`);
  }
}

/** Throws 403 unless `access` may use `action` at all, whatever index it names (or none). */
function checkAction(access: Access, action: string): void {
  if (!allowsAction(access.scope, action)) {
    throw new ApiError(403, `${holderOf(access)} may not use action "${action}"`);
  }
  const tenantFilters = access.tenantFilters;
  if (tenantFilters === undefined) return;
  // A token is a browser's: it never manages keys or reads analytics, whatever its key was granted.
  if (NAMED_ONLY_ACTIONS.includes(action)) throw new ApiError(403, `A tenant token may not use action "${action}"`);
  if (!FILTERED_TOKEN_ACTIONS.includes(action) && tenantFilters.some(({ filter }) => filter !== undefined)) {
    throw new ApiError(
      403,
      `A tenant token with a filter may not use action "${action}": it may use only ` +
        FILTERED_TOKEN_ACTIONS.map((name) => `"${name}"`).join(", "),
    );
  }
}

/** How a refusal names the caller's credential: the project key, or the key (a token's is its registered key). */
export function holderOf(access: Access): string {
  return access.keyId === null ? "The project key" : `Key "${access.keyId}"`;
}

/**
 * The filter that a tenant token sets on the index of `names` (an alias and its index): the filters of every pattern
 * that matches either name, all of them; undefined when none does.
 */
export function tenantFilterOf(access: Access, names: readonly string[]): MetadataFilter | undefined {
  const filters = (access.tenantFilters ?? []).filter(({ pattern, filter }) =>
    filter !== undefined && names.some((name) => patternMatches(pattern, name))
  ).map(({ filter }) => filter!);
  if (filters.length === 0) return undefined;
  return (metadata) => filters.every((filter) => filter(metadata));
}
