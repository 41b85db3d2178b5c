/**
 * `searchAnalytics`' answer from the stored days of an index: the days' tallies added up, their searches per day, the
 * p50 and p95 of their durations, the most searched queries and those that most often found nothing.
 */
import type { SearchAnalytics } from "../api/analytics_api_types.ts";
import { emptyTally, latencyQuantile, mergeTally, type SearchTally } from "./search_tally.ts";

/** Rounds to 4 decimals, as rates and means are shown. */
function rounded(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

/**
 * The report of `days` (every day asked for, oldest first) from the tallies of those that have one, with at most
 * `limit` queries in each list.
 */
export function analyticsReport(
  days: readonly string[],
  stored: ReadonlyMap<string, SearchTally>,
  limit: number,
): SearchAnalytics {
  const total = emptyTally();
  for (const tally of stored.values()) mergeTally(total, tally, Infinity);
  const queries = [...total.queries];
  const topQueries = queries.filter(([, counts]) => counts.count > 0)
    .sort(([a, x], [b, y]) => y.count - x.count || (a < b ? -1 : 1))
    .slice(0, limit)
    .map(([query, counts]) => ({
      query,
      count: counts.count,
      avgResults: rounded(counts.results / counts.count),
      clicks: counts.clicks,
      clickThroughRate: rounded(counts.clicks / counts.count),
      meanClickPosition: counts.clicks === 0 ? null : rounded(counts.clickPositions / counts.clicks),
    }));
  const noResultQueries = queries.filter(([, counts]) => counts.noResults > 0)
    .sort(([a, x], [b, y]) => y.noResults - x.noResults || (a < b ? -1 : 1))
    .slice(0, limit)
    .map(([query, counts]) => ({ query, count: counts.noResults }));
  return {
    searches: total.searches,
    noResultSearches: total.noResultSearches,
    p50Ms: latencyQuantile(total.latency, 0.5),
    p95Ms: latencyQuantile(total.latency, 0.95),
    topQueries,
    noResultQueries,
    days: days.map((day) => {
      const tally = stored.get(day);
      return { day, searches: tally?.searches ?? 0, noResultSearches: tally?.noResultSearches ?? 0 };
    }),
  };
}
