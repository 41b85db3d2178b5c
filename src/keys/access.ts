/** What one authenticated request may do: its key's scope, and a tenant token's filters. */
import { ApiError } from "../api/api_error.ts";
import type { MetadataFilter } from "../search/metadata_filter.ts";
import { allowsAction, allowsIndex, type KeyScope, patternMatches } from "./key_scope.ts";

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
 * The actions a tenant token with a filter may use: those that apply its filter, and `recordClick`, which reaches no
 * document; the others would reach documents (or other tenants' queries) outside it.
 */
const FILTERED_ACTIONS: readonly string[] = ["search", "getDocs", "getIndex", "listIndexes", "recordClick"];

/**
 * Throws 403 unless `access` allows `action` on the index that `names` name: the name as requested, and for an alias
 * the index it points at; either name may be in the scope. The answer is the same whether or not the index exists.
 */
export function checkAccess(access: Access, action: string, names: readonly string[]): void {
  const who = access.keyId === null ? "The project key" : `Key "${access.keyId}"`;
  if (!allowsAction(access.scope, action)) throw new ApiError(403, `${who} may not use action "${action}"`);
  const indexName = names[0];
  if (indexName === undefined) return;
  if (!names.some((name) => allowsIndex(access.scope, name))) {
    throw new ApiError(403, `${who} may not use index "${indexName}"`);
  }
  if (!FILTERED_ACTIONS.includes(action) && tenantFilterOf(access, names) !== undefined) {
    throw new ApiError(
      403,
      `A tenant token may not use action "${action}" on index "${indexName}": its filter applies only to ` +
        FILTERED_ACTIONS.map((name) => `"${name}"`).join(", "),
    );
  }
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
