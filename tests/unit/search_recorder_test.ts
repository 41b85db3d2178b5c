/**
 * The search recorder over one store shared by two instances: a click counts toward a query searched that day on
 * either instance, waiting one flush for a search that another instance has not stored yet, and is dropped after that.
 * And the days an index reads: its own, and those stored before indexes were told apart by their creation from the
 * day it was created on.
 */
import assert from "node:assert/strict";
import { SearchRecorder } from "../../src/analytics/search_recorder.ts";
import {
  countSearch,
  decodeTally,
  emptyTally,
  encodeTally,
  type QueryCounts,
} from "../../src/analytics/search_tally.ts";
import { mergeAnalyticsDay, readAnalyticsDays } from "../../src/storage/analytics_records.ts";
import { daysBefore, utcDay } from "../../src/util/utc_days.ts";

const INDEX = { projectId: "p", indexName: "shop", indexCreatedAt: "2026-01-01T00:00:00.000Z" };

/** The queries of today's stored tally of {@link INDEX}; none when no day is stored. */
async function storedQueries(kv: Deno.Kv): Promise<[string, QueryCounts][]> {
  const today = utcDay(Date.now());
  const days = await readAnalyticsDays(kv, INDEX, { from: today, to: today });
  return days.flatMap(({ tally }) => [...decodeTally(tally).queries]);
}

Deno.test("a click waits one flush for its search from another instance, then counts or is dropped", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    // No start(): the flushes come when the test says.
    const settings = { top: 5, days: 30, flushMs: 60_000 };
    const a = new SearchRecorder(kv, settings);
    const b = new SearchRecorder(kv, settings);
    a.recordSearch(INDEX, "Couch", 2, 1);
    b.recordClick(INDEX, "couch", 3);
    for (let i = 0; i < 20; i++) b.recordClick(INDEX, `made up ${i}`, 1);
    await b.flush();
    assert.deepEqual(await storedQueries(kv), [], "clicks alone whose search is not stored write nothing");
    await a.flush();
    await b.flush();
    const counted = { count: 1, results: 2, noResults: 0, clicks: 1, clickPositions: 3 };
    assert.deepEqual(await storedQueries(kv), [["couch", counted]]);

    b.recordClick(INDEX, "refund", 1);
    await b.flush();
    await b.flush();
    a.recordSearch(INDEX, "refund", 1, 1);
    await a.flush();
    await b.flush();
    const late = await storedQueries(kv);
    assert.deepEqual(late.map(([query, counts]) => [query, counts.clicks]), [["couch", 1], ["refund", 0]]);
    await a.close();
    await b.close();
  } finally {
    kv.close();
  }
});

Deno.test("an index reads its own days, and days stored before creations were told apart from its creation day on", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const today = utcDay(Date.now());
    const yesterday = daysBefore(today, 1);
    /** A tally of one search of `query`, as stored. */
    const tallyOf = (query: string) => {
      const tally = emptyTally();
      countSearch(tally, { query, results: 1, tookMs: 1 }, 5);
      return encodeTally(tally);
    };
    // Days as the release before wrote them: no creation in the head's key.
    for (const [day, query] of [[yesterday, "before its creation"], [today, "on its creation day"]] as const) {
      await kv.set(["analytics_chunks", "p", "shop", day, "v1", 0], new TextEncoder().encode(tallyOf(query)));
      await kv.set(["analytics", "p", "shop", day], { version: "v1", chunks: 1 });
    }
    const createdToday = { projectId: "p", indexName: "shop", indexCreatedAt: `${today}T08:00:00.000Z` };
    const earlier = { ...createdToday, indexCreatedAt: `${yesterday}T08:00:00.000Z` };
    await mergeAnalyticsDay(kv, { ...earlier, day: today }, () => tallyOf("earlier index"));
    await mergeAnalyticsDay(kv, { ...createdToday, day: today }, () => tallyOf("its own"));
    const queriesOf = async (index: typeof createdToday) =>
      (await readAnalyticsDays(kv, index, { from: yesterday, to: today }))
        .map(({ day, tally }) => [day, [...decodeTally(tally).queries.keys()]]);
    assert.deepEqual(await queriesOf(createdToday), [[today, ["on its creation day"]], [today, ["its own"]]]);
    assert.deepEqual(await queriesOf(earlier), [
      [yesterday, ["before its creation"]],
      [today, ["on its creation day"]],
      [today, ["earlier index"]],
    ]);
  } finally {
    kv.close();
  }
});
