/**
 * Search analytics hold only what the index's own searches made: a project deleted and created again under its id, or
 * an index deleted and created again under its name, starts afresh (and `restoreIndex` brings back the old index's
 * own); a deleted index's analytics go once its undo window has passed; and clicks on queries nobody searched take
 * none of a day's `ANALYTICS_TOP` places.
 *
 * One in-process server serves every test, so that it starts once: the tests share it across `Deno.test`s, and
 * therefore turn the resource and op sanitizers off; the last test to finish closes it. Each test has its own project
 * or index, since analytics are kept per index.
 */
import assert from "node:assert/strict";
import { startTestServer, type TestServer } from "../_helpers.ts";
import { sharedFixture } from "../_shared_fixture.ts";
import type { SearchAnalytics } from "../../client.ts";
import { runProjectCommand } from "../../src/cli/project_command.ts";
import { collectGarbage } from "../../src/storage/garbage_collector.ts";

const DOCS = [
  { id: "couch-1", text: "a grey couch with cushions" },
  { id: "couch-2", text: "a leather couch" },
  { id: "refund", text: "how to get a refund" },
];

/** Searches of one index, for `search` with the fields every call here needs. */
const fulltext = (indexName: string, query: string) => ({ action: "search", indexName, query, mode: "fulltext" });

/** Searches up to two flush intervals of `ANALYTICS_FLUSH_INTERVAL` apart show within this long. */
const FLUSHED_WITHIN_MS = 5_000;

/** A test on one server: few top queries, a short flush interval, and no cache of keys and records between tests. */
const test = sharedFixture(
  () => startTestServer({ env: { ANALYTICS_TOP: "5", ANALYTICS_FLUSH_INTERVAL: "100ms", METADATA_CACHE_MS: "0" } }),
  (server) => server.close(),
);

/** Calls `POST /manage` as `key` in `projectId`, and asserts a 200; returns the body. */
async function ok<T>(server: TestServer, key: string, body: Record<string, unknown>): Promise<T> {
  const response = await server.call(body, { "x-project-key": key });
  const json = await response.json();
  assert.equal(response.status, 200, `${body.action}: ${JSON.stringify(json)}`);
  return json as T;
}

/** The report of `indexName` once `done` holds of it, or the last one read after {@link FLUSHED_WITHIN_MS}. */
async function reportWhen(
  server: TestServer,
  target: { key: string; projectId: string; indexName: string },
  done: (report: SearchAnalytics) => boolean,
): Promise<SearchAnalytics> {
  const { key, projectId, indexName } = target;
  const deadline = Date.now() + FLUSHED_WITHIN_MS;
  for (;;) {
    const report = await ok<SearchAnalytics>(server, key, { action: "searchAnalytics", projectId, indexName });
    if (done(report) || Date.now() > deadline) return report;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The key printed by `project create <projectId>`. */
async function createProject(server: TestServer, projectId: string): Promise<string> {
  const created = await runProjectCommand(server.kv, ["create", projectId]);
  assert.equal(created.code, 0, created.stderr.join("\n"));
  return JSON.parse(created.stdout[0]!).key;
}

test("a project deleted and created again under its id reads none of the old project's analytics", async (server) => {
  const oldKey = await createProject(server, "acme");
  const old = { key: oldKey, projectId: "acme", indexName: "shop" };
  await ok(server, oldKey, { action: "createIndex", projectId: "acme", indexName: "shop", docs: DOCS });
  await ok(server, oldKey, { projectId: "acme", ...fulltext("shop", "leather couch") });
  await ok(server, oldKey, { projectId: "acme", ...fulltext("shop", "secret merger") });
  const before = await reportWhen(server, old, (report) => report.searches === 2);
  assert.deepEqual(before.topQueries.map((query) => query.query).sort(), ["leather couch", "secret merger"]);

  const deleted = await runProjectCommand(server.kv, ["delete", "acme"]);
  assert.equal(deleted.code, 0, deleted.stderr.join("\n"));
  const newKey = await createProject(server, "acme");
  await ok(server, newKey, { action: "createIndex", projectId: "acme", indexName: "shop", docs: DOCS });
  const after = await ok<SearchAnalytics>(server, newKey, {
    action: "searchAnalytics",
    projectId: "acme",
    indexName: "shop",
  });
  assert.equal(after.searches, 0, JSON.stringify(after));
  assert.deepEqual([after.topQueries, after.noResultQueries], [[], []]);
  const kept = await Array.fromAsync(server.kv.list({ prefix: ["analytics", "acme"] }));
  assert.deepEqual(kept.map(({ key }) => key), [], "the old project's analytics went with it");
});

test("an index created again under a deleted one's name starts afresh, and each keeps its own until collected", async (server) => {
  const target = { key: server.key, projectId: "default", indexName: "cycle" };
  await server.ok({ action: "createIndex", indexName: "cycle", docs: DOCS });
  const { id: firstId } = await server.ok<{ id: string }>({ action: "getIndex", indexName: "cycle" });
  await server.ok(fulltext("cycle", "couch"));
  await reportWhen(server, target, (report) => report.searches === 1);
  await server.ok({ action: "deleteIndex", indexName: "cycle" });

  await server.ok({ action: "createIndex", indexName: "cycle", docs: DOCS });
  const fresh = await server.ok<SearchAnalytics>({ action: "searchAnalytics", indexName: "cycle" });
  assert.deepEqual([fresh.searches, fresh.topQueries], [0, []], "nothing of the deleted index of the name");
  await server.ok(fulltext("cycle", "refund"));
  const second = await reportWhen(server, target, (report) => report.searches === 1);
  assert.deepEqual(second.topQueries.map((query) => query.query), ["refund"]);

  await server.ok({ action: "deleteIndex", indexName: "cycle" });
  await server.ok({ action: "restoreIndex", indexName: "cycle", indexId: firstId });
  const restored = await server.ok<SearchAnalytics>({ action: "searchAnalytics", indexName: "cycle" });
  assert.deepEqual(restored.topQueries.map((query) => [query.query, query.count]), [["couch", 1]]);

  // Past the undo window the collector reclaims both deleted indexes, and their analytics with them.
  await server.ok({ action: "deleteIndex", indexName: "cycle" });
  await collectGarbage(server.kv, Date.now() + 25 * 60 * 60 * 1000);
  const kept = await Array.fromAsync(server.kv.list({ prefix: ["analytics", "default", "cycle"] }));
  assert.deepEqual(kept.map(({ key }) => key), []);
});

test("clicks on queries nobody searched are answered true but take none of the day's top places", async (server) => {
  await server.ok({ action: "createIndex", indexName: "clicks", docs: DOCS });
  const { key: searchKey } = await server.ok<{ key: string }>({
    action: "createKey",
    actions: ["search"],
    indexes: ["clicks"],
  });
  const click = (query: string, id = "couch-1") => ({
    action: "recordClick",
    indexName: "clicks",
    query,
    id,
    position: 1,
  });
  let made = 0;
  // Ahead of each real search, more made-up queries than ANALYTICS_TOP (5), as a flood of clicks would send them.
  for (const query of ["couch", "refund", "grey cushions"]) {
    for (let i = 0; i < 10; i++) assert.equal(await ok(server, searchKey, click(`made up ${made++}`)), true);
    await ok(server, searchKey, fulltext("clicks", query));
    // A browser sends the query of the search that it shows the hits of.
    if (query === "couch") assert.equal(await ok(server, searchKey, click(query)), true);
  }
  while (made < 50) assert.equal(await ok(server, searchKey, click(`made up ${made++}`)), true);

  const target = { key: server.key, projectId: "default", indexName: "clicks" };
  const report = await reportWhen(server, target, (report) => {
    return report.searches === 3 && report.topQueries.find((query) => query.query === "couch")?.clicks === 1;
  });
  assert.deepEqual(
    report.topQueries.map(({ query, count, clicks }) => ({ query, count, clicks })),
    [
      { query: "couch", count: 1, clicks: 1 },
      { query: "grey cushions", count: 1, clicks: 0 },
      { query: "refund", count: 1, clicks: 0 },
    ],
  );
  assert.deepEqual(report.noResultQueries, []);
});
