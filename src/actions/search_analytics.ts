/** `searchAnalytics` and `recordClick`: what was searched in an index, and the clicks on its hits. */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import { cachedIndexRecord } from "./get_index.ts";
import { ApiError } from "../api/api_error.ts";
import type { SearchAnalytics } from "../api/analytics_api_types.ts";
import { DEFAULT_ANALYTICS_LIMIT, MAX_ANALYTICS_RANGE_DAYS } from "../api/analytics_schemas.ts";
import { analyticsIndexOf, readAnalyticsDays } from "../storage/analytics_records.ts";
import { decodeTally, mergeTally, type SearchTally } from "../analytics/search_tally.ts";
import { analyticsReport } from "../analytics/analytics_report.ts";
import { daysBefore, daysBetween, utcDay } from "../util/utc_days.ts";

/**
 * The index's searches from `from` to `to` as every instance has stored them (up to `ANALYTICS_FLUSH_INTERVAL` ago),
 * since the index was created: not those of an earlier index of its name; 404 for an unknown index, 400 for a range
 * backwards or longer than {@link MAX_ANALYTICS_RANGE_DAYS} days.
 */
export async function searchAnalytics(
  ctx: ServiceContext,
  request: RequestOf<"searchAnalytics">,
): Promise<SearchAnalytics> {
  const record = await cachedIndexRecord(ctx, request.projectId, request.indexName);
  const to = request.to ?? utcDay(Date.now());
  const from = request.from ?? daysBefore(to, ctx.analyticsDays - 1);
  const days = daysBetween(from, to);
  if (days.length === 0) throw new ApiError(400, `Invalid "from": ${from} is after "to", ${to}`);
  if (days.length > MAX_ANALYTICS_RANGE_DAYS) {
    throw new ApiError(
      400,
      `Invalid "from": the range holds ${days.length} days, more than ${MAX_ANALYTICS_RANGE_DAYS}`,
    );
  }
  const stored = new Map<string, SearchTally>();
  for (const { day, tally } of await readAnalyticsDays(ctx.kv, analyticsIndexOf(record), { from, to })) {
    const held = stored.get(day);
    stored.set(day, held === undefined ? decodeTally(tally) : mergeTally(held, decodeTally(tally), Infinity));
  }
  return analyticsReport(days, stored, request.limit ?? DEFAULT_ANALYTICS_LIMIT);
}

/**
 * Counts a click on a hit of a search of `query`, if the query was searched in the index that day (nothing when
 * `ANALYTICS=false`); 404 for an unknown index. A click on a query nobody searched is `true` too: clients send clicks
 * without waiting for the answer.
 */
export async function recordClick(ctx: ServiceContext, request: RequestOf<"recordClick">): Promise<true> {
  const record = await cachedIndexRecord(ctx, request.projectId, request.indexName);
  const index = { ...analyticsIndexOf(record), language: record.language };
  ctx.analytics?.recordClick(index, request.query, request.position);
  return true;
}
