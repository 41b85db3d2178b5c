/**
 * The zod schemas of search analytics: the requests of `searchAnalytics` (a range of UTC days) and `recordClick`, and
 * `searchAnalytics`' answer.
 */
import { z } from "zod";
import { isUtcDay } from "../util/utc_days.ts";

/** The most days one `searchAnalytics` covers. */
export const MAX_ANALYTICS_RANGE_DAYS = 366;
/** The most queries in each list of `searchAnalytics`, and how many when `limit` is absent. */
export const MAX_ANALYTICS_LIMIT = 1_000;
export const DEFAULT_ANALYTICS_LIMIT = 20;

const daySchema = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, { message: "must be a UTC day written YYYY-MM-DD" })
  .refine(isUtcDay, { message: "must be a day of the calendar" });

/** The request of `searchAnalytics`, given the fields every indexed request has. */
export function searchAnalyticsSchema<T extends z.ZodRawShape>(indexed: T) {
  return z.object({
    action: z.literal("searchAnalytics"),
    ...indexed,
    from: daySchema.optional().describe("The first UTC day (YYYY-MM-DD); by default the oldest day kept"),
    to: daySchema.optional().describe("The last UTC day, included; by default today"),
    limit: z.number().int().min(1).max(MAX_ANALYTICS_LIMIT).optional().describe(
      `The most queries in topQueries and in noResultQueries (default ${DEFAULT_ANALYTICS_LIMIT})`,
    ),
  }).describe("What was searched in an index per UTC day: counts, latency, top and no-result queries");
}

/** The request of `recordClick`, given the fields every indexed request has and the longest document id. */
export function recordClickSchema<T extends z.ZodRawShape>(indexed: T, maxDocIdBytes: number) {
  return z.object({
    action: z.literal("recordClick"),
    ...indexed,
    query: z.string().max(4_096).describe("The query of the search whose hit was clicked, as it was sent"),
    id: z.string().min(1).refine((id) => new TextEncoder().encode(id).byteLength <= maxDocIdBytes, {
      message: `must be at most ${maxDocIdBytes} bytes, like every document id`,
    }).describe("The document clicked"),
    position: z.number().int().min(1).max(10_000).describe("Its place in the results, from 1"),
  }).describe(
    "Counts a click on a search's hit for the query's click-through in searchAnalytics, if the query was searched in " +
      "the index that day; answers true",
  );
}

/** `searchAnalytics`' answer. */
export const searchAnalyticsResultSchema = z.object({
  searches: z.number().int().describe("Searches in the days asked for"),
  noResultSearches: z.number().int().describe("Those that found nothing"),
  p50Ms: z.number().nullable().describe("The median search's tookMs (within 1%); null without searches"),
  p95Ms: z.number().nullable().describe("The 95th percentile of tookMs (within 1%); null without searches"),
  topQueries: z.array(z.object({
    query: z.string().describe("Normalized: folded words without stop words, one space apart"),
    count: z.number().int(),
    avgResults: z.number().describe("The mean number of results (total) of its searches"),
    clicks: z.number().int().describe("Clicks recorded with recordClick"),
    clickThroughRate: z.number().describe("Clicks per search of the query (0 without clicks)"),
    meanClickPosition: z.number().nullable().describe("The mean position (from 1) clicked; null without clicks"),
  })).describe("The most searched queries, most first"),
  noResultQueries: z.array(z.object({ query: z.string(), count: z.number().int() })).describe(
    "The queries whose searches found nothing, by how often, most first",
  ),
  days: z.array(z.object({ day: z.string(), searches: z.number().int(), noResultSearches: z.number().int() }))
    .describe("Every day asked for, oldest first"),
});
