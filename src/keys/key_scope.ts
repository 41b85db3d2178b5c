/**
 * What a key may do: which actions, on which indexes. Pure rules: whether a scope allows a request, and whether one
 * scope lies within another (a key may only create keys within its own).
 */
import { ACTIONS } from "../api/request_schemas.ts";

/** The actions that manage keys and the webhook secret: never granted by `*`, only by name. */
export const KEY_ACTIONS = ["createKey", "listKeys", "deleteKey", "getWebhookSecret", "rotateWebhookSecret"] as const;

/**
 * The actions that `*` never grants, only their name: key management, and `searchAnalytics`, which reads every
 * visitor's queries of an index.
 */
export const NAMED_ONLY_ACTIONS: readonly string[] = [...KEY_ACTIONS, "searchAnalytics"];

/** The actions a key may be granted by name. */
export const GRANTABLE_ACTIONS: readonly string[] = ACTIONS;

/** What a key may do; a project key's scope holds every action, key management included. */
export interface KeyScope {
  /** Action names, or `*` for every action but those of {@link NAMED_ONLY_ACTIONS}. */
  readonly actions: readonly string[];
  /** Index names, where a trailing `*` matches every name that starts with what precedes it. */
  readonly indexes: readonly string[];
  /** An ISO time after which the key answers 403, or null. */
  readonly expiresAt: string | null;
  /** The key's rate, or null for none of its own. */
  readonly requestsPerMinute: number | null;
}

/** The scope of a project key: everything, always. */
export const PROJECT_KEY_SCOPE: KeyScope = {
  actions: [...GRANTABLE_ACTIONS],
  indexes: ["*"],
  expiresAt: null,
  requestsPerMinute: null,
};

/**
 * Actions that other actions grant: a `multiSearch` is searches, and a `search` is a `multiSearch` of one query; a
 * click on a hit is part of searching.
 */
const GRANTED_BY = new Map([
  ["search", ["multiSearch"]],
  ["multiSearch", ["search"]],
  ["recordClick", ["search", "multiSearch"]],
]);

/** Whether `scope` grants `action`. */
export function allowsAction(scope: Pick<KeyScope, "actions">, action: string): boolean {
  if (scope.actions.includes(action)) return true;
  if (GRANTED_BY.get(action)?.some((granting) => scope.actions.includes(granting))) return true;
  return scope.actions.includes("*") && !NAMED_ONLY_ACTIONS.includes(action);
}

/** Whether `pattern` (a name, or a prefix ending in `*`) matches the index `name`. */
export function patternMatches(pattern: string, name: string): boolean {
  return pattern.endsWith("*") ? name.startsWith(pattern.slice(0, -1)) : pattern === name;
}

/** Whether `scope` grants the index `name`. */
export function allowsIndex(scope: Pick<KeyScope, "indexes">, name: string): boolean {
  return scope.indexes.some((pattern) => patternMatches(pattern, name));
}

/** Whether every index that `inner` matches is also matched by `outer`. */
function patternCovers(outer: string, inner: string): boolean {
  return outer.endsWith("*") ? inner.startsWith(outer.slice(0, -1)) : !inner.endsWith("*") && outer === inner;
}

/** Whether every index that `inner` matches is also matched by one of `outer`. */
export function patternsCover(outer: readonly string[], inner: string): boolean {
  return outer.some((pattern) => patternCovers(pattern, inner));
}

/**
 * What `inner` has beyond `outer`, as a message for a 403, or null when it lies within: its actions, indexes, expiry
 * and rate each no wider.
 */
export function widerThan(inner: KeyScope, outer: KeyScope): string | null {
  const actions = inner.actions.flatMap((action) =>
    action === "*"
      ? ACTIONS.filter((named) => allowsAction(inner, named) && !allowsAction(outer, named))
      : allowsAction(outer, action)
      ? []
      : [action]
  );
  if (actions.length > 0) return `action "${actions[0]}"`;
  const index = inner.indexes.find((pattern) => !patternsCover(outer.indexes, pattern));
  if (index !== undefined) return `index "${index}"`;
  // Instants, not strings: an ISO string of a year past 9999 ("+010000-…") sorts before "2027-…".
  if (
    outer.expiresAt !== null && (inner.expiresAt === null || Date.parse(inner.expiresAt) > Date.parse(outer.expiresAt))
  ) {
    return `an expiry later than ${outer.expiresAt}`;
  }
  if (
    outer.requestsPerMinute !== null &&
    (inner.requestsPerMinute === null || inner.requestsPerMinute > outer.requestsPerMinute)
  ) {
    return `a rate above ${outer.requestsPerMinute} requests per minute`;
  }
  return null;
}
