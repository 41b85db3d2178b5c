/**
 * Search analytics end to end: a scripted set of searches and clicks on two real server processes over one KV file
 * adds up in `searchAnalytics` on either (totals, days, top and no-result queries, click-through); `analytics: false`
 * and `ANALYTICS=false` record nothing; days past `ANALYTICS_DAYS` are collected at start; and who may read and click.
 */
import assert from "node:assert/strict";
import { ok, serverEnvironment, type ServerProcess, startServerProcess } from "../_server_process.ts";
import { startTestServer } from "../_helpers.ts";
import { QuireClient, type SearchAnalytics } from "../../client.ts";
import { emptyTally, encodeTally } from "../../src/analytics/search_tally.ts";
import { mergeAnalyticsDay } from "../../src/storage/analytics_records.ts";
import { daysBefore, utcDay } from "../../src/util/utc_days.ts";

const DOCS = [
  { id: "couch-1", text: "a grey couch with cushions" },
  { id: "couch-2", text: "a leather couch" },
  { id: "refund", text: "how to get a refund" },
];

const fulltext = (query: string, more: Record<string, unknown> = {}) => ({
  action: "search",
  indexName: "shop",
  query,
  mode: "fulltext",
  ...more,
});

/** Polls `searchAnalytics` on `server` until it counts `searches` and 2 clicks on its top query; fails after 5 s. */
async function analyticsOf(server: ServerProcess, searches: number, limit = 20): Promise<SearchAnalytics> {
  const started = performance.now();
  for (;;) {
    const report = await ok<SearchAnalytics>(server, { action: "searchAnalytics", indexName: "shop", limit });
    if (report.searches >= searches && report.topQueries[0]?.clicks === 2) return report;
    assert.ok(
      performance.now() - started < 5_000,
      `searchAnalytics never counted ${searches}: ${JSON.stringify(report)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

Deno.test("the searches and clicks of two instances add up in searchAnalytics, ranked, with click-through", async () => {
  const env = { ...await serverEnvironment(), ANALYTICS_FLUSH_INTERVAL: "100ms", LOG_REQUESTS: "false" };
  await using a = await startServerProcess(env);
  await using b = await startServerProcess(env, a.key);
  await ok(a, { action: "createIndex", indexName: "shop", docs: DOCS });

  for (let i = 0; i < 3; i++) await ok(a, fulltext("couch"));
  await ok(a, fulltext("Refund"));
  await ok(a, { action: "search", indexName: "shop", similarTo: "couch-1" });
  for (let i = 0; i < 5; i++) await ok(a, fulltext("couch", { analytics: false }));
  await ok(b, fulltext("COUCH"));
  await ok(b, fulltext("couches"));
  await ok(b, fulltext("sofa"));
  await ok(b, fulltext("sofa"));
  await ok(b, fulltext("The Sofa!"));
  // Hybrid ranks every document; what its words matched is what it found.
  await ok(b, { action: "search", indexName: "shop", query: "zebra" });
  await ok(b, {
    action: "multiSearch",
    queries: [fulltext("couch"), fulltext("zebra"), fulltext("sofa", { analytics: false })],
  });
  await ok(b, { action: "recordClick", indexName: "shop", query: "Couch", id: "couch-1", position: 1 });
  await ok(a, { action: "recordClick", indexName: "shop", query: "couch", id: "couch-2", position: 3 });

  const report = await analyticsOf(a, 13);
  assert.equal(report.searches, 13, "5 on A (similarTo included) and 8 on B; none with analytics: false");
  assert.equal(report.noResultSearches, 5);
  assert.deepEqual(report.topQueries, [
    { query: "couch", count: 5, avgResults: 2, clicks: 2, clickThroughRate: 0.4, meanClickPosition: 2 },
    { query: "sofa", count: 3, avgResults: 0, clicks: 0, clickThroughRate: 0, meanClickPosition: null },
    { query: "zebra", count: 2, avgResults: 0, clicks: 0, clickThroughRate: 0, meanClickPosition: null },
    { query: "couches", count: 1, avgResults: 2, clicks: 0, clickThroughRate: 0, meanClickPosition: null },
    { query: "refund", count: 1, avgResults: 1, clicks: 0, clickThroughRate: 0, meanClickPosition: null },
  ]);
  assert.deepEqual(report.noResultQueries, [{ query: "sofa", count: 3 }, { query: "zebra", count: 2 }]);
  assert.equal(report.days.length, 30, "the last ANALYTICS_DAYS days by default");
  assert.deepEqual(report.days.at(-1), { day: utcDay(Date.now()), searches: 13, noResultSearches: 5 });
  assert.ok(report.days.slice(0, -1).every((day) => day.searches === 0));
  assert.ok(report.p50Ms !== null && report.p50Ms > 0 && report.p95Ms! >= report.p50Ms, JSON.stringify(report));

  const fromB = await analyticsOf(b, 13, 1);
  assert.deepEqual(fromB.topQueries.map((query) => query.query), ["couch"], "limit cuts each list");
  assert.deepEqual(fromB.noResultQueries, [{ query: "sofa", count: 3 }]);
  const yesterday = daysBefore(utcDay(Date.now()), 1);
  const past = await ok<SearchAnalytics>(b, { action: "searchAnalytics", indexName: "shop", to: yesterday });
  assert.equal(past.searches, 0, "a range before today holds none of today's searches");
  assert.equal(past.p50Ms, null);
});

Deno.test("ANALYTICS=false records nothing; days past ANALYTICS_DAYS are collected at start", async () => {
  await using off = await startTestServer({ env: { ANALYTICS: "false" } });
  await off.ok({ action: "createIndex", indexName: "shop", docs: DOCS });
  const { createdAt } = await off.ok<{ createdAt: string }>({ action: "getIndex", indexName: "shop" });
  await off.ok(fulltext("couch"));
  assert.equal(
    await off.ok({ action: "recordClick", indexName: "shop", query: "couch", id: "couch-1", position: 1 }),
    true,
  );
  const today = utcDay(Date.now());
  const old = daysBefore(today, 3);
  for (const day of [old, today]) {
    await mergeAnalyticsDay(off.kv, { projectId: "default", indexName: "shop", indexCreatedAt: createdAt, day }, () => {
      const tally = emptyTally();
      tally.searches = 7;
      return encodeTally(tally);
    });
  }
  await off.close();

  await using on = await startTestServer({ kvPath: off.kvPath, key: off.key, env: { ANALYTICS_DAYS: "2" } });
  const stored = async () => {
    const heads = await Array.fromAsync(on.kv.list({ prefix: ["analytics"] }));
    return heads.map(({ key }) => key[3]);
  };
  for (let waited = 0; (await stored()).includes(old); waited += 20) {
    assert.ok(waited < 5_000, "the old day was never collected");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.deepEqual(await stored(), [today]);
  const report = await on.ok<SearchAnalytics>({ action: "searchAnalytics", indexName: "shop", from: old });
  assert.equal(report.searches, 7, "only the seeded day kept; ANALYTICS=false added nothing");
  assert.deepEqual(report.days.map((day) => day.searches), [0, 0, 0, 7]);
  assert.deepEqual(report.topQueries, []);
});

Deno.test("a search key records clicks but reads analytics only when granted searchAnalytics by name", async () => {
  await using server = await startTestServer({ env: { ANALYTICS_FLUSH_INTERVAL: "50ms" } });
  await server.ok({ action: "createIndex", indexName: "shop", docs: DOCS });
  const keyOf = async (actions: string[]) =>
    (await server.ok<{ key: string }>({ action: "createKey", actions, indexes: ["shop"] })).key;
  const searcher = await keyOf(["search"]);
  const reader = await keyOf(["getIndex", "recordClick"]);
  const analyst = await keyOf(["search", "searchAnalytics"]);
  const as = (key: string, body: Record<string, unknown>) => server.call(body, { "x-project-key": key });

  assert.equal((await as(searcher, fulltext("couch"))).status, 200);
  const click = { action: "recordClick", indexName: "shop", query: "couch", id: "couch-1", position: 1 };
  assert.equal((await as(searcher, click)).status, 200);
  assert.equal((await as(reader, click)).status, 200, "recordClick may be granted by name");
  const analytics = { action: "searchAnalytics", indexName: "shop" };
  for (const key of [reader, searcher]) {
    const refused = await as(key, analytics);
    assert.equal(refused.status, 403, "searchAnalytics is granted only by name");
    assert.match((await refused.json()).error, /may not use action "searchAnalytics"/);
  }
  for (let waited = 0;; waited += 20) {
    const report = await (await as(analyst, analytics)).json() as SearchAnalytics;
    if (report.topQueries[0]?.clicks === 2) break;
    assert.ok(waited < 5_000, `never counted: ${JSON.stringify(report)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  // The typed client: a browser's search box records clicks with a search-only key, a report reads with the analyst's.
  const browser = new QuireClient({ baseUrl: new URL("/", server.url), projectId: "default", key: searcher });
  assert.equal(await browser.recordClick("shop", { query: "couch", id: "couch-2", position: 2 }), true);
  const client = new QuireClient({ baseUrl: new URL("/", server.url), projectId: "default", key: analyst });
  const fromClient = await client.searchAnalytics("shop", { from: daysBefore(utcDay(Date.now()), 1), limit: 1 });
  assert.deepEqual(fromClient.days.map((day) => day.searches), [0, 1]);
  const other = await as(analyst, { action: "searchAnalytics", indexName: "elsewhere" });
  assert.equal(other.status, 403);
});

Deno.test("a server that stops adds the searches it has counted since its last flush into the store", async () => {
  const server = await startTestServer({ env: { ANALYTICS_FLUSH_INTERVAL: "1h" } });
  await server.ok({ action: "createIndex", indexName: "shop", docs: DOCS });
  await server.ok(fulltext("couch"));
  await server.ok(fulltext("sofa"));
  const before = await server.ok<SearchAnalytics>({ action: "searchAnalytics", indexName: "shop" });
  assert.equal(before.searches, 0, "nothing flushed within the hour");
  await using restarted = await server.restart();
  const after = await restarted.ok<SearchAnalytics>({ action: "searchAnalytics", indexName: "shop" });
  assert.equal(after.searches, 2);
  assert.deepEqual(after.noResultQueries, [{ query: "sofa", count: 1 }]);
});
