/** Search tallies: counting, the bound of distinct queries, merging, the latency quantiles, and their stored form. */
import assert from "node:assert/strict";
import {
  addSearchedClicks,
  countClick,
  countSearch,
  decodeTally,
  emptyTally,
  encodeTally,
  latencyBucket,
  latencyQuantile,
  mergeTally,
  renamedQueries,
} from "../../src/analytics/search_tally.ts";
import { normalizedQuery } from "../../src/analytics/search_recorder.ts";
import { analyticsReport } from "../../src/analytics/analytics_report.ts";

Deno.test("a tally counts searches, empty answers and clicks per query, and at most `top` distinct queries", () => {
  const tally = emptyTally();
  countSearch(tally, { query: "couch", results: 4, tookMs: 1 }, 2);
  countSearch(tally, { query: "sofa", results: 0, tookMs: 2 }, 2);
  countSearch(tally, { query: "chair", results: 1, tookMs: 3 }, 2);
  countSearch(tally, { query: undefined, results: 9, tookMs: 4 }, 2);
  countClick(tally, "couch", 3, 2);
  countClick(tally, "table", 1, 2);
  assert.equal(tally.searches, 4, "a search past the bound, or without text, still counts in the totals");
  assert.equal(tally.noResultSearches, 1);
  assert.deepEqual([...tally.queries.keys()], ["couch", "sofa"]);
  assert.deepEqual(tally.queries.get("couch"), { count: 1, results: 4, noResults: 0, clicks: 1, clickPositions: 3 });
  assert.deepEqual(decodeTally(encodeTally(tally)), tally);
});

Deno.test("merging adds every count and keeps the most searched queries, the held ones on a tie", () => {
  const held = emptyTally();
  for (const query of ["a", "b", "b", "c"]) countSearch(held, { query, results: 1, tookMs: 1 }, 10);
  const more = emptyTally();
  for (const query of ["d", "d", "d", "a", "e"]) countSearch(more, { query, results: 0, tookMs: 100 }, 10);
  const merged = mergeTally(held, more, 3);
  assert.equal(merged.searches, 9);
  assert.equal(merged.noResultSearches, 5);
  assert.deepEqual([...merged.queries].map(([query, counts]) => [query, counts.count]), [["d", 3], ["a", 2], ["b", 2]]);
  assert.deepEqual(merged.queries.get("a"), { count: 2, results: 1, noResults: 1, clicks: 0, clickPositions: 0 });
});

Deno.test("clicks count toward queries the day has searches of, and the others are handed back", () => {
  const day = emptyTally();
  countSearch(day, { query: "couch", results: 2, tookMs: 1 }, 10);
  countClick(day, "legacy", 1, 10);
  const clicks = emptyTally();
  for (const query of ["couch", "couch", "made up", "legacy"]) countClick(clicks, query, 2, 10);
  const unsearched = addSearchedClicks(day, clicks);
  assert.deepEqual(day.queries.get("couch"), { count: 1, results: 2, noResults: 0, clicks: 2, clickPositions: 4 });
  assert.deepEqual(day.queries.get("legacy")?.clicks, 1, "an entry of clicks alone is no search");
  assert.deepEqual([...unsearched.queries.keys()], ["made up", "legacy"]);
  assert.equal(day.queries.has("made up"), false, "no place taken");
});

Deno.test("latency quantiles come from the histogram within 1%", () => {
  const tally = emptyTally();
  for (let ms = 1; ms <= 100; ms++) countSearch(tally, { query: undefined, results: 1, tookMs: ms }, 10);
  const p50 = latencyQuantile(tally.latency, 0.5)!;
  const p95 = latencyQuantile(tally.latency, 0.95)!;
  assert.ok(Math.abs(p50 - 50) <= 0.5, `p50 ${p50}`);
  assert.ok(Math.abs(p95 - 95) <= 0.95, `p95 ${p95}`);
  assert.equal(latencyQuantile(new Map(), 0.5), null);
  assert.equal(latencyBucket(0), 0);
  assert.ok(latencyBucket(60_000) > latencyBucket(59_000));
});

Deno.test("queries are kept as their folded words without stop words, cut at a word's end", () => {
  assert.equal(normalizedQuery("  The Grey  COUCH!", "english"), "grey couch");
  assert.equal(normalizedQuery("Café Crème", "french"), "cafe creme");
  assert.equal(normalizedQuery("the", "english"), "the", "a query of stop words only keeps them");
  assert.equal(normalizedQuery("word ".repeat(100), "english").length, 254);
});

Deno.test("the report ranks queries, rates clicks, and fills every day of the range", () => {
  const tally = emptyTally();
  for (const query of ["sofa", "couch", "couch", "sofa", "sofa"]) {
    countSearch(tally, { query, results: query === "sofa" ? 0 : 2, tookMs: 2 }, 10);
  }
  countClick(tally, "couch", 1, 10);
  countClick(tally, "couch", 2, 10);
  countClick(tally, "couch", 4, 10);
  const report = analyticsReport(["2026-11-24", "2026-11-25"], new Map([["2026-11-25", tally]]), 10);
  assert.deepEqual(report.topQueries, [
    { query: "sofa", count: 3, avgResults: 0, clicks: 0, clickThroughRate: 0, meanClickPosition: null },
    { query: "couch", count: 2, avgResults: 2, clicks: 3, clickThroughRate: 1.5, meanClickPosition: 2.3333 },
  ]);
  assert.deepEqual(report.noResultQueries, [{ query: "sofa", count: 3 }]);
  assert.deepEqual(report.days, [
    { day: "2026-11-24", searches: 0, noResultSearches: 0 },
    { day: "2026-11-25", searches: 5, noResultSearches: 3 },
  ]);
});

Deno.test("renaming queries to their normalized form adds up those that become one, and drops the empty ones", () => {
  const tally = emptyTally();
  for (const query of ["The Sofa", "sofa!", "?!", "couch"]) countSearch(tally, { query, results: 0, tookMs: 1 }, 10);
  countClick(tally, "SOFA", 2, 10);
  const renamed = renamedQueries(tally, (query) => normalizedQuery(query, "english"));
  assert.equal(renamed.searches, 4);
  assert.deepEqual([...renamed.queries.keys()], ["sofa", "couch"]);
  assert.deepEqual(renamed.queries.get("sofa"), { count: 2, results: 0, noResults: 2, clicks: 1, clickPositions: 2 });
  assert.equal(tally.queries.size, 5, "the tally itself is left as it was");
});
