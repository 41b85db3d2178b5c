/** Several instances over one store, in one test process: catch-up from the log, the memory budget, snapshot leases. */
import assert from "node:assert/strict";
import { assertJsonError, startTestServer, type TestServer } from "../_helpers.ts";
import { takeSnapshotLease, truncatableRevision, writeSnapshot } from "../../src/storage/snapshot_store.ts";

function loads(server: TestServer): Record<string, number> {
  return Object.fromEntries(server.service.context.metrics.loads());
}

function words(seed: number, count: number): string {
  const pool = ["river", "storm", "forest", "music", "apple", "train", "science", "lantern", "meadow", "copper"];
  return Array.from({ length: count }, (_, i) => pool[(seed * 7 + i * 3) % pool.length]).join(" ");
}

Deno.test("a write on one instance reaches another's cached index by catch-up from the log, not a reload", async () => {
  await using a = await startTestServer();
  await using b = await startTestServer({ kvPath: a.kvPath, key: a.key });
  const docs = Array.from({ length: 200 }, (_, i) => ({ id: `d${i}`, text: words(i, 12) }));
  await a.ok({ action: "createIndex", indexName: "shared", docs });
  const query = { action: "search", indexName: "shared", query: "zephyr", mode: "fulltext" };
  assert.equal((await b.ok<{ total: number }>(query)).total, 0);
  const before = loads(b);
  await a.ok({ action: "addDocs", indexName: "shared", docs: [{ id: "new", text: "a zephyr over the meadow" }] });
  const hits = await b.ok<{ hits: { id: string }[] }>(query);
  assert.deepEqual(hits.hits.map((hit) => hit.id), ["new"], "B sees A's acknowledged write at once");
  const after = loads(b);
  assert.equal((after.catchup ?? 0) - (before.catchup ?? 0), 1, "one catch-up");
  assert.equal(after.full ?? 0, before.full ?? 0, "no full reload");
  assert.equal(after.snapshot ?? 0, before.snapshot ?? 0, "no snapshot reload");
  const view = await b.ok<{ memoryBytes?: number }>({ action: "getIndex", indexName: "shared" });
  assert.ok((view.memoryBytes ?? 0) > 0, "getIndex shows the state B holds");
});

Deno.test("an index that cannot fit the memory budget answers 507 naming SEARCH_CACHE_MB, and the rest goes on", async () => {
  await using server = await startTestServer({ env: { SEARCH_CACHE_MB: "1" } });
  const docs = Array.from({ length: 1500 }, (_, i) => ({ id: `d${i}`, text: `${words(i, 40)} unique${i}` }));
  await server.ok({ action: "createIndex", indexName: "big", docs });
  await server.ok({ action: "createIndex", indexName: "small", docs: [{ id: "s", text: "a small lantern" }] });
  const response = await server.call({ action: "search", indexName: "big", query: "unique7", mode: "fulltext" });
  const body = await assertJsonError(response, 507, /SEARCH_CACHE_MB \(1\)/);
  assert.equal(body.action, "search");
  const small = await server.ok<{ total: number }>({ action: "search", indexName: "small", query: "lantern" });
  assert.equal(small.total, 1);
  assert.ok(server.service.context.indexStates.totalBytes() <= 1024 * 1024);
});

Deno.test("least recently searched indexes are evicted to stay within the budget, and reload correctly", async () => {
  // Each index (500 documents, each with a word of its own) needs about 1 MB: the budget holds one, not all three.
  await using server = await startTestServer({ env: { SEARCH_CACHE_MB: "2" } });
  for (const name of ["one", "two", "three"]) {
    const docs = Array.from({ length: 500 }, (_, i) => ({ id: `${name}${i}`, text: `${words(i, 30)} ${name}${i}` }));
    await server.ok({ action: "createIndex", indexName: name, docs });
  }
  for (let round = 0; round < 3; round++) {
    for (const name of ["one", "two", "three"]) {
      const query = { action: "search", indexName: name, query: `${name}${round}`, mode: "fulltext" };
      const found = await server.ok<{ hits: { id: string }[] }>(query);
      assert.equal(found.hits[0]?.id, `${name}${round}`);
      assert.ok(server.service.context.indexStates.totalBytes() <= 2 * 1024 * 1024);
    }
  }
  assert.ok(server.service.context.metrics.evictions() > 0, "something was evicted");
});

Deno.test("one snapshot writer at a time: a live lease keeps others out, an expired one is taken over", async () => {
  using kv = await Deno.openKv(":memory:");
  const bytes = new Uint8Array(64);
  const held = await takeSnapshotLease(kv, "ix", "dead-writer", { ms: 1000, now: 10_000 });
  assert.ok(held !== null);
  assert.equal(await takeSnapshotLease(kv, "ix", "other", { ms: 1000, now: 10_500 }), null, "still held");
  const taken = await takeSnapshotLease(kv, "ix", "other", { ms: 1000, now: 11_001 });
  assert.ok(taken !== null, "expired: taken over");
  assert.ok(
    !await writeSnapshot(kv, "ix", { revision: 2, pieces: [bytes] }, { lease: held }),
    "the old holder cannot swap",
  );
  assert.ok(await writeSnapshot(kv, "ix", { revision: 2, pieces: [bytes] }, { lease: taken, now: 20_000 }));
  assert.equal((await kv.get(["snapshot", "ix", "lease"])).value, null, "the swap releases the lease");
});

Deno.test("the change log stays readable for the retention window after a snapshot covers it", () => {
  const pointer = {
    versionId: "v",
    revision: 9,
    chunks: 1,
    bytes: 1,
    history: [{ revision: 3, at: 1_000 }, { revision: 9, at: 5_000 }],
  };
  assert.equal(truncatableRevision(pointer, 5_000, 10_000), 0, "both swaps are recent: keep everything");
  assert.equal(truncatableRevision(pointer, 11_000, 10_000), 3, "the older swap left the window");
  assert.equal(truncatableRevision(pointer, 15_000, 10_000), 9);
  assert.equal(
    truncatableRevision({ ...pointer, history: undefined }, 20_000, 10_000),
    9,
    "an old pointer counts as old",
  );
});

Deno.test("the change log within the retention window is kept only up to the snapshot's size", () => {
  const mib = 1024 * 1024;
  // A snapshot of 20 MiB, swapped in every second, each covering 3 MiB of log more than the one before.
  const history = Array.from({ length: 12 }, (_, i) => ({ revision: 10 * (i + 1), at: 1_000 * i, logBytes: 3 * mib }));
  const pointer = { versionId: "v", revision: 120, chunks: 400, bytes: 20 * mib, history };
  // Swaps 5 to 11 covered 21 MiB of log after swap 4's revision (50): a process behind that reloads the snapshot.
  assert.equal(truncatableRevision(pointer, 12_000, 600_000), 50);
  assert.equal(
    truncatableRevision({ ...pointer, bytes: 40 * mib }, 12_000, 600_000),
    0,
    "a larger snapshot keeps all of that log",
  );
  assert.equal(
    truncatableRevision({ ...pointer, bytes: 1, history: history.slice(-3) }, 12_000, 600_000),
    100,
    "a small snapshot still keeps at least 4 MiB of log: the 6 MiB of the last two swaps",
  );
});

Deno.test("a snapshot writer's lease keeps another instance out until it expires, then that instance writes", async () => {
  await using a = await startTestServer();
  await using b = await startTestServer({ kvPath: a.kvPath, key: a.key });
  await a.ok({ action: "createIndex", indexName: "leased", docs: [{ id: "first", text: "a first lantern" }] });
  await a.service.context.background.idle();
  const record = (await a.kv.get<{ id: string }>(["indexes", "default", "leased"])).value!;
  // What a writer killed mid-snapshot leaves: its lease, for a little longer.
  const lease = ["snapshot", record.id, "lease"];
  await a.kv.set(lease, { owner: "killed-writer", until: Date.now() + 60_000 });
  const long = (i: number) => ({ id: `long${i}`, text: `${words(i, 20)} `.repeat(60) });
  const written = () => b.service.context.metrics.snapshotsWritten();
  // Over 1 MiB of log: a snapshot is due.
  await b.ok({ action: "addDocs", indexName: "leased", docs: Array.from({ length: 200 }, (_, i) => long(i)) });
  await b.service.context.background.idle();
  assert.equal(written(), 0, "the live lease keeps B out");
  // The killed writer's lease runs out.
  await a.kv.set(lease, { owner: "killed-writer", until: Date.now() - 1 });
  await b.ok({ action: "addDocs", indexName: "leased", docs: [long(999)] });
  await b.service.context.background.idle();
  assert.equal(written(), 1, "once it expired, B took the lease and wrote the snapshot");
  assert.equal((await a.kv.get(lease)).value, null, "and released it");
  const pointer = (await a.kv.get<{ revision: number }>(["snapshot", record.id])).value!;
  assert.equal(pointer.revision, 3);
});

Deno.test("unreadable lease and running-job entries are logged and recovered from, never a crash", async () => {
  await using server = await startTestServer();
  const warnings: string[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => warnings.push(args.join(" "));
  try {
    await server.ok({ action: "createIndex", indexName: "odd", docs: [{ id: "a", text: "an odd copper lantern" }] });
    await server.service.context.background.idle();
    const record = (await server.kv.get<{ id: string }>(["indexes", "default", "odd"])).value!;
    await server.kv.set(["snapshot", record.id, "lease"], "not a lease");
    await server.kv.set(["jobs_running", "no-such-index"], { kind: "indexJob", chunks: "many" });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal((await server.kv.get(["jobs_running", "no-such-index"])).value, null, "the bad job entry went");
    assert.ok(warnings.some((line) => line.includes("unreadable running-job entry")));
    const before = server.service.context.metrics.snapshotsWritten();
    const docs = Array.from({ length: 200 }, (_, i) => ({ id: `l${i}`, text: `${words(i, 20)} `.repeat(60) }));
    await server.ok({ action: "addDocs", indexName: "odd", docs });
    await server.service.context.background.idle();
    assert.equal(server.service.context.metrics.snapshotsWritten(), before + 1, "the bad lease was replaced");
    const found = await server.ok<{ total: number }>({ action: "search", indexName: "odd", query: "copper" });
    assert.ok(found.total >= 1);
  } finally {
    console.warn = warn;
  }
});
