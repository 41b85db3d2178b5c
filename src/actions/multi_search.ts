/**
 * `multiSearch`: several searches in one request. Each query is authorized on its own (its index, through aliases,
 * within the caller's scope, with a tenant token's filters), validated on its own and run as a `search`; a query that
 * fails answers its own error and the others go on. Without `federation` the answer is each query's answer in order;
 * with it, one page of every query's hits, merged by their scores normalised per query (each divided by its query's
 * best), so that the best hit of every query scores 1 and the rest keep their distance below it.
 */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import { DEFAULT_HIT_FIELDS } from "../api/request_schemas.ts";
import type { SearchResult } from "../api/response_schemas.ts";
import { ApiError } from "../api/api_error.ts";
import type {
  FederatedHit,
  FederatedQueryError,
  FederatedSearchResult,
  MultiSearchResult,
  QueryError,
} from "../api/multi_search_api_types.ts";
import { parseSearchQuery } from "../api/multi_search_queries.ts";
import { isStoreBusy } from "../storage/store_busy.ts";
import { type Access, tenantFilterOf } from "../keys/access.ts";
import { authorizeRequest } from "../keys/authorize_request.ts";
import { search } from "./search.ts";

/**
 * Fields of a query that a federated `multiSearch` refuses: the merged list is paged and ordered as a whole, by score
 * (a reranked query's order is not its scores').
 */
const NOT_FEDERATED = ["limit", "offset", "sort", "facets", "rerank"] as const;

/** One query's outcome: its answer and the index it ran on, or its error. */
type Outcome = { result: SearchResult; indexName: string; include: ReadonlySet<string> } | { error: QueryError };

/** Runs every query of `request` as `access` allows; answers them in order, or merged with `federation`. */
export async function multiSearch(
  ctx: ServiceContext,
  request: RequestOf<"multiSearch">,
  access: Access,
): Promise<MultiSearchResult> {
  const started = performance.now();
  const { federation, projectId } = request;
  if (federation !== undefined) checkFederated(request.queries);
  // Each query of a federation ranks as deep as the merged page reaches.
  const depth = federation === undefined ? undefined : (federation.offset ?? 0) + (federation.limit ?? 10);
  const outcomes = await Promise.all(
    request.queries.map((query, position) => runQuery(ctx, { query, position, projectId, access, depth })),
  );
  if (federation === undefined) {
    return { results: outcomes.map((outcome) => "error" in outcome ? outcome.error : outcome.result) };
  }
  return federate(outcomes, { offset: federation.offset ?? 0, limit: federation.limit ?? 10, started });
}

/** 400 for a query field that a federated search pages or orders by as a whole. */
function checkFederated(queries: readonly Record<string, unknown>[]): void {
  queries.forEach((query, position) => {
    const field = NOT_FEDERATED.find((name) => query[name] !== undefined);
    if (field !== undefined) {
      throw new ApiError(
        400,
        `Invalid "queries[${position}].${field}": a federated multiSearch pages and orders the merged hits, so its ` +
          `queries take no "${field}" (use "federation.limit" and "federation.offset")`,
      );
    }
  });
}

/** One query, where it stands in the request, and who asks. */
interface QueryRun {
  query: Record<string, unknown>;
  position: number;
  projectId: string;
  access: Access;
  /** For a federation: the hits to rank from the top, scored. */
  depth: number | undefined;
}

/** Authorizes, validates and runs one query, in the order of a request of its own; any failure is its outcome. */
async function runQuery(ctx: ServiceContext, run: QueryRun): Promise<Outcome> {
  const { query, position, projectId, access, depth } = run;
  try {
    // The scope is checked before the query's fields and the index, as for a search of its own.
    const { names, target } = await authorizeRequest(ctx.records, access, {
      action: "search",
      projectId,
      indexName: query.indexName,
    });
    const valid = parseSearchQuery(ctx.limits, query, { projectId, position });
    const include = new Set<string>(valid.include ?? DEFAULT_HIT_FIELDS);
    const indexName = target ?? valid.indexName;
    const request = depth === undefined
      ? { ...valid, indexName }
      : { ...valid, indexName, offset: 0, limit: depth, include: [...include, "score"] as typeof valid.include };
    const result = await search(ctx, request, tenantFilterOf(access, names));
    return { result, indexName, include };
  } catch (error) {
    return { error: queryError(error, position) };
  }
}

/** What a failed query answers in its slot: the error and status of a search of its own; a 5xx is logged. */
function queryError(error: unknown, position: number): QueryError {
  if (error instanceof ApiError && error.status < 500) return { error: error.message, status: error.status };
  if (isStoreBusy(error)) return { error: "The store is busy with another process: retry shortly", status: 503 };
  console.error(
    `Request failed (multiSearch, queries[${position}]):`,
    error instanceof ApiError ? error.cause ?? error.message : error,
  );
  return error instanceof ApiError
    ? { error: error.message, status: error.status }
    : { error: "Internal server error", status: 500 };
}

/** A hit of one query, placed for the merge. */
interface Candidate {
  hit: FederatedHit;
  /** Its score divided by its query's best. */
  score: number;
  /** Its place in its query's own order. */
  rank: number;
  /** Whether a pin of its index's settings put it first: it has no score, and stays ahead of every scored hit. */
  pinned: boolean;
}

/**
 * One page of every answered query's hits: pinned hits first, then by normalised score, then by their place in their
 * own query's order, then by the query's place; a document that two queries of one index found appears once, where it
 * ranks best.
 */
function federate(
  outcomes: readonly Outcome[],
  page: { offset: number; limit: number; started: number },
): FederatedSearchResult {
  const candidates: Candidate[] = [];
  const errors: FederatedQueryError[] = [];
  let total = 0;
  outcomes.forEach((outcome, queryPosition) => {
    if ("error" in outcome) return void errors.push({ ...outcome.error, queryPosition });
    const { result, indexName, include } = outcome;
    total += result.total;
    const best = Math.max(0, ...result.hits.map((hit) => hit.score ?? 0));
    result.hits.forEach(({ id, score: raw = 0, ...fields }, rank) => {
      const score = best > 0 ? Math.max(0, raw) / best : 0;
      const pinned = fields.pinned === true;
      const shown = include.has("score") && !pinned ? { score } : {};
      const hit: FederatedHit = { id, indexName, queryPosition, ...shown, ...fields };
      candidates.push({ hit, score, rank, pinned });
    });
  });
  candidates.sort((a, b) =>
    Number(b.pinned) - Number(a.pinned) || b.score - a.score || a.rank - b.rank ||
    a.hit.queryPosition - b.hit.queryPosition
  );
  const seen = new Set<string>();
  const merged = candidates.filter(({ hit }) => {
    const key = JSON.stringify([hit.indexName, hit.id]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const answer: FederatedSearchResult = {
    hits: merged.slice(page.offset, page.offset + page.limit).map(({ hit }) => hit),
    total,
    tookMs: Math.round((performance.now() - page.started) * 1000) / 1000,
  };
  if (errors.length > 0) answer.errors = errors;
  return answer;
}
