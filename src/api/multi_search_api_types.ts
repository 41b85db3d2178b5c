/**
 * The answer of `multiSearch` as plain TypeScript types: each query's answer in order, or one federated list.
 * `api_types.ts` exports them with the other bodies; `tests/unit/api_types_test.ts` checks them against the zod schemas.
 */
import type { SearchHit, SearchResult } from "./search_result_types.ts";

/**
 * The body of `multiSearch` over searches of type `Query`; `api_types.ts` names it `MultiSearchRequest`, whose
 * queries are the fields of a `search` without `action` and `projectId`.
 */
export interface MultiSearchRequestOf<Query> {
  /** The action. */
  action: "multiSearch";
  /** The project, whose key goes in the `x-project-key` header. */
  projectId: string;
  /** 1 to 20 searches, each authorized and answered on its own, in this order. */
  queries: Query[];
  /** One merged page of every query's hits instead of an answer per query. */
  federation?: FederationOptions | undefined;
}

/** `federation` of a `multiSearch`: one merged page of every query's hits. */
export interface FederationOptions {
  /** Hits per page, 1 to 100; 10 when absent. */
  limit?: number | undefined;
  /** Hits to skip, 0 to 1000. */
  offset?: number | undefined;
}

/** A query of `multiSearch` that failed: the error and status that the search alone would have answered. */
export interface QueryError {
  /** What was wrong (4xx) or what failed (5xx). */
  error: string;
  /** The HTTP status the search alone would have had. */
  status: number;
}

/** The answer of `multiSearch` without `federation`: each query's answer or error, in the order asked. */
export interface MultiSearchResults {
  /** One slot per query: its search answer, or its error. */
  results: (SearchResult | QueryError)[];
}

/** A hit of a federated `multiSearch`: a search hit, its index and its query. */
export interface FederatedHit extends SearchHit {
  /** The index of the hit (the index an alias points at). */
  indexName: string;
  /** The place of its query in `queries`, from 0. */
  queryPosition: number;
}

/** A failed query of a federated `multiSearch`. */
export interface FederatedQueryError extends QueryError {
  /** The place of the query in `queries`, from 0. */
  queryPosition: number;
}

/** The answer of `multiSearch` with `federation`: one page of every query's hits, merged by normalised score. */
export interface FederatedSearchResult {
  /** The page, best first; each hit's `score` is its query's score divided by that query's best. */
  hits: FederatedHit[];
  /** The sum of every answered query's total. */
  total: number;
  /** Time the searches took on the server. */
  tookMs: number;
  /** The queries that failed, whose hits are missing; absent when none did. */
  errors?: FederatedQueryError[] | undefined;
}

/** The answer of `multiSearch`. */
export type MultiSearchResult = MultiSearchResults | FederatedSearchResult;
