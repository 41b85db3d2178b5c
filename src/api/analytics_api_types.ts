/**
 * Search analytics as plain TypeScript types: the bodies of `searchAnalytics` and `recordClick`, and the report.
 * `api_types.ts` joins them into the API's unions; `tests/unit/api_types_test.ts` checks them against the zod schemas.
 */

/** The body of `searchAnalytics`: an index's searches over a range of UTC days. */
export interface SearchAnalyticsRequest {
  /** The action. */
  action: "searchAnalytics";
  /** The project. */
  projectId: string;
  /** The index or an alias of it. */
  indexName: string;
  /** The first UTC day, `YYYY-MM-DD`; by default the oldest day kept (`ANALYTICS_DAYS`). */
  from?: string | undefined;
  /** The last UTC day, included; by default today. */
  to?: string | undefined;
  /** The most queries in each list (default 20, at most 1,000). */
  limit?: number | undefined;
}

/** The body of `recordClick`: a click on a search's hit, for the query's click-through. */
export interface RecordClickRequest {
  /** The action. */
  action: "recordClick";
  /** The project. */
  projectId: string;
  /** The index or an alias of it. */
  indexName: string;
  /** The query of the search, as it was sent. */
  query: string;
  /** The document clicked. */
  id: string;
  /** Its place in the results, from 1. */
  position: number;
}

/** One of the most searched queries. */
export interface TopQuery {
  /** Normalized: folded words without stop words, one space apart. */
  query: string;
  /** Its searches. */
  count: number;
  /** The mean number of results of its searches. */
  avgResults: number;
  /** Clicks recorded with `recordClick`. */
  clicks: number;
  /** Clicks per search of the query. */
  clickThroughRate: number;
  /** The mean position clicked, from 1; null without clicks. */
  meanClickPosition: number | null;
}

/** The answer of `searchAnalytics`. */
export interface SearchAnalytics {
  /** Searches in the days asked for. */
  searches: number;
  /** Those that found nothing. */
  noResultSearches: number;
  /** The median `tookMs`, within 1%; null without searches. */
  p50Ms: number | null;
  /** The 95th percentile of `tookMs`, within 1%; null without searches. */
  p95Ms: number | null;
  /** The most searched queries, most first. */
  topQueries: TopQuery[];
  /** Queries whose searches found nothing, by how often. */
  noResultQueries: { query: string; count: number }[];
  /** Every day asked for, oldest first. */
  days: { day: string; searches: number; noResultSearches: number }[];
}
