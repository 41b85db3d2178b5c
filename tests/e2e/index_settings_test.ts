/**
 * `updateSettings` end to end: the settings an index shows and how they change (validation, limits, merge), synonyms
 * of both kinds in full-text and hybrid search (highlights, an exact match above a synonym's), pinned results (order,
 * missing and filtered ids, paging), and settings kept by export and import.
 */
import assert from "node:assert/strict";
import { assertJsonError, startTestServer, type TestServer } from "../_helpers.ts";
import { QuireClient, QuireError } from "../../client.ts";

interface Hit {
  id: string;
  score?: number;
  text?: string;
  pinned?: true;
  highlights?: { start: number; end: number }[];
}

interface Result {
  hits: Hit[];
  total: number;
}

interface Settings {
  synonyms: unknown[];
  pins: { query: string; ids: string[] }[];
}

const DOCS = [
  { id: "sofa-1", text: "A grey sofa with three cushions", metadata: { shop: "north" } },
  { id: "couch-1", text: "A grey couch with three cushions", metadata: { shop: "north" } },
  { id: "settee-1", text: "An old settee in green velvet", metadata: { shop: "south" } },
  { id: "chair-1", text: "A kitchen chair of pine", metadata: { shop: "south" } },
  { id: "ny-1", text: "Hotels in New York near the park", metadata: { shop: "north" } },
  { id: "nyc-1", text: "Cheap flights to NYC this winter", metadata: { shop: "north" } },
  { id: "york-1", text: "A weekend in York, England", metadata: { shop: "south" } },
  { id: "policy-7", text: "Our returns policy for damaged goods", metadata: { shop: "north" } },
  { id: "faq-3", text: "Frequently asked questions about orders", metadata: { shop: "south" } },
  { id: "refund-1", text: "How to get a refund for an order", metadata: { shop: "north" } },
  { id: "refund-2", text: "Refunds take five days", metadata: { shop: "south" } },
];

async function search(server: TestServer, body: Record<string, unknown>): Promise<Result> {
  return await server.ok<Result>({ action: "search", indexName: "shop", mode: "fulltext", ...body });
}

function marked(hit: Hit): string[] {
  return (hit.highlights ?? []).map(({ start, end }) => hit.text!.slice(start, end).toLowerCase());
}

async function withShop(run: (server: TestServer) => Promise<void>): Promise<void> {
  await using server = await startTestServer();
  await server.ok({ action: "createIndex", indexName: "shop", docs: DOCS });
  await run(server);
}

Deno.test("an index shows empty settings until updateSettings changes them, one setting at a time", async () => {
  await withShop(async (server) => {
    const index = await server.ok<{ settings: Settings }>({ action: "getIndex", indexName: "shop" });
    assert.deepEqual(index.settings, { synonyms: [], pins: [] });
    const synonyms = [{ words: ["sofa", "couch"] }];
    const updated = await server.ok<{ settings: Settings; version: string }>({
      action: "updateSettings",
      indexName: "shop",
      settings: { synonyms },
    });
    assert.deepEqual(updated.settings, { synonyms, pins: [] });
    assert.equal(updated.version, "1", "settings need no rebuild and leave the documents' version alone");
    const pins = [{ query: "refund", ids: ["policy-7"] }];
    await server.ok({ action: "updateSettings", indexName: "shop", settings: { pins } });
    const listed = await server.ok<{ settings: Settings }[]>({ action: "listIndexes" });
    assert.deepEqual(listed[0]!.settings, { synonyms, pins }, "a setting left out keeps its value");
    await server.ok({ action: "updateSettings", indexName: "shop", settings: { synonyms: [], pins: [] } });
    const cleared = await server.ok<{ settings: Settings }>({ action: "getIndex", indexName: "shop" });
    assert.deepEqual(cleared.settings, { synonyms: [], pins: [] });
  });
});

Deno.test("updateSettings refuses unknown settings, bad entries, more than 10,000 synonyms and an unknown index", async (t) => {
  await withShop(async (server) => {
    const update = (settings: unknown, indexName = "shop") =>
      server.call({ action: "updateSettings", indexName, settings });
    await t.step("an unknown setting", async () => {
      await assertJsonError(
        await update({ stopWords: ["the"] }),
        400,
        /Invalid "settings": Unrecognized key: "stopWords"/,
      );
    });
    await t.step("an unknown key in an entry", async () => {
      await assertJsonError(await update({ synonyms: [{ from: "a", to: ["b"], both: true }] }), 400, /synonyms\[0\]/);
    });
    await t.step("a group of one word, and a phrase without a word", async () => {
      await assertJsonError(await update({ synonyms: [{ words: ["sofa"] }] }), 400, /synonyms\[0\]\.words/);
      await assertJsonError(await update({ synonyms: [{ from: "?!", to: ["x"] }] }), 400, /at least one word/);
    });
    await t.step("the limit of 10,000 entries", async () => {
      const synonyms = Array.from({ length: 10_001 }, (_, i) => ({ words: [`w${i}`, `v${i}`] }));
      await assertJsonError(await update({ synonyms }), 400, /at most 10000 entries, the limit of synonyms per index/);
      const fits = await update({ synonyms: synonyms.slice(0, 10_000) });
      assert.equal(fits.status, 200);
      await fits.body?.cancel();
    });
    await t.step("two pins of one query as the index reads it", async () => {
      const pins = [{ query: "Refunds", ids: ["a"] }, { query: "the refund", ids: ["b"] }];
      await assertJsonError(await update({ pins }), 400, /pins\[1\]\.query.*reads as pin 0's query/);
    });
    await t.step("an unknown index", async () => {
      await assertJsonError(await update({ pins: [] }, "nowhere"), 404, /Index "nowhere" not found/);
    });
  });
});

Deno.test("synonyms of both kinds find each other, highlight the synonym found, and rank below an exact match", async () => {
  await withShop(async (server) => {
    const exact = { typoTolerance: false, prefix: false };
    assert.deepEqual((await search(server, { query: "couch", ...exact })).hits.map((hit) => hit.id), ["couch-1"]);
    await server.ok({
      action: "updateSettings",
      indexName: "shop",
      settings: {
        synonyms: [{ words: ["sofa", "couch", "settee"] }, { from: "NYC", to: ["new york", "new york city"] }],
      },
    });
    const include = ["text", "score", "highlights"];
    const couch = await search(server, { query: "couches", include, ...exact });
    assert.deepEqual(couch.hits.map((hit) => hit.id).sort(), ["couch-1", "settee-1", "sofa-1"]);
    assert.equal(couch.hits[0]!.id, "couch-1", "the exact (stemmed) match first");
    assert.ok(couch.hits[0]!.score! > couch.hits[1]!.score!);
    const sofa = couch.hits.find((hit) => hit.id === "sofa-1")!;
    assert.deepEqual(marked(sofa), ["sofa"], "the synonym found is highlighted");
    // Two documents that differ only in the word: the query's own word scores above its synonym.
    const [first, second] = (await search(server, { query: "sofa", include, ...exact })).hits;
    assert.deepEqual([first!.id, second!.id], ["sofa-1", "couch-1"]);

    // One way: NYC finds "new york", but "new york" does not find "nyc".
    const nyc = await search(server, { query: "nyc", include, ...exact });
    assert.equal(nyc.hits[0]!.id, "nyc-1");
    assert.ok(nyc.hits.some((hit) => hit.id === "ny-1"));
    assert.deepEqual(marked(nyc.hits.find((hit) => hit.id === "ny-1")!), ["new", "york"]);
    const newYork = await search(server, { query: "new york", ...exact });
    assert.ok(!newYork.hits.some((hit) => hit.id === "nyc-1"));
    assert.equal(newYork.hits[0]!.id, "ny-1");

    // Hybrid's full-text half takes them too; vector mode does not.
    const hybrid = await search(server, { query: "settee", mode: "hybrid", include: ["highlights", "text"] });
    assert.equal(hybrid.hits[0]!.id, "settee-1");
    const sofaInHybrid = hybrid.hits.find((hit) => hit.id === "sofa-1")!;
    assert.deepEqual(marked(sofaInHybrid), ["sofa"]);
    const vector = await search(server, { query: "settee", mode: "vector", include: ["highlights", "text"] });
    assert.deepEqual(marked(vector.hits.find((hit) => hit.id === "sofa-1")!), []);
  });
});

Deno.test("pinned ids come first in their order, skipping missing and filtered ones, and page with the rest", async () => {
  await withShop(async (server) => {
    await server.ok({
      action: "updateSettings",
      indexName: "shop",
      settings: { pins: [{ query: "refund", ids: ["policy-7", "gone", "faq-3", "refund-2"] }] },
    });
    const plain = await search(server, { query: "refund", limit: 100, typoTolerance: false });
    assert.equal(plain.total, 4);
    assert.deepEqual(plain.hits.map((hit) => hit.id), ["policy-7", "faq-3", "refund-2", "refund-1"]);
    assert.deepEqual(plain.hits.map((hit) => hit.pinned ?? false), [true, true, true, false]);
    assert.equal(plain.hits[0]!.score, undefined, "a pinned hit has no score");
    assert.equal(typeof plain.hits[3]!.score, "number");
    // The query as the index reads it: case, stems and stop words do not matter.
    const read = await search(server, { query: "The REFUNDS", limit: 100, typoTolerance: false });
    assert.deepEqual(read.hits.map((hit) => hit.id), plain.hits.map((hit) => hit.id));
    assert.equal((await search(server, { query: "refund policy" })).hits[0]?.pinned, undefined, "another query");

    // Pages cut the one list, and total counts each document once.
    const pages: string[] = [];
    for (let offset = 0; offset < 5; offset += 2) {
      const page = await search(server, { query: "refund", offset, limit: 2, typoTolerance: false });
      assert.equal(page.total, 4);
      pages.push(...page.hits.map((hit) => hit.id));
    }
    assert.deepEqual(pages, plain.hits.map((hit) => hit.id));

    // A filtered-out pin is skipped; the tenant of a filter never sees another's pinned documents.
    const north = await search(server, {
      query: "refund",
      filter: { shop: "north" },
      limit: 100,
      typoTolerance: false,
    });
    assert.deepEqual(north.hits.map((hit) => hit.id), ["policy-7", "refund-1"]);
    assert.equal(north.total, 2);

    // In hybrid and vector mode every document is ranked: pins come first, and total is unchanged.
    const hybrid = await search(server, { query: "refund", mode: "hybrid", limit: 100 });
    assert.equal(hybrid.total, DOCS.length);
    assert.deepEqual(hybrid.hits.slice(0, 3).map((hit) => hit.id), ["policy-7", "faq-3", "refund-2"]);
    assert.equal(new Set(hybrid.hits.map((hit) => hit.id)).size, DOCS.length);

    await server.ok({ action: "deleteDocs", indexName: "shop", docIds: ["policy-7"] });
    const after = await search(server, { query: "refund", typoTolerance: false });
    assert.deepEqual(after.hits.map((hit) => hit.id), ["faq-3", "refund-2", "refund-1"], "a deleted pin is skipped");
  });
});

Deno.test("exportIndex carries the settings on its first line, and importIndex keeps them", async () => {
  await withShop(async (server) => {
    const settings = {
      synonyms: [{ words: ["sofa", "couch"] }, { from: "nyc", to: ["new york"] }],
      pins: [{ query: "refund", ids: ["policy-7"] }],
    };
    await server.ok({ action: "updateSettings", indexName: "shop", settings });
    const exported = await (await server.call({ action: "exportIndex", indexName: "shop" })).text();
    const header = JSON.parse(exported.split("\n")[0]!);
    assert.deepEqual(header.settings, settings);
    const body = `${JSON.stringify({ action: "importIndex", projectId: "default", indexName: "copy" })}\n${exported}`;
    const imported = await server.send(body, { "content-type": "application/x-ndjson" });
    assert.equal(imported.status, 200, await imported.clone().text());
    assert.deepEqual((await imported.json()).settings, settings);
    const hits = await server.ok<Result>({ action: "search", indexName: "copy", query: "refund", mode: "fulltext" });
    assert.equal(hits.hits[0]!.id, "policy-7");
    assert.equal(hits.hits[0]!.pinned, true);
    const couch = await server.ok<Result>({ action: "search", indexName: "copy", query: "couch", mode: "fulltext" });
    assert.ok(couch.hits.some((hit) => hit.id === "sofa-1"));
  });
});

Deno.test("settings move with the index when reembedIndex gives it a new id, and a restored index keeps them", async () => {
  await withShop(async (server) => {
    const settings = { synonyms: [{ words: ["sofa", "couch"] }], pins: [{ query: "refund", ids: ["faq-3"] }] };
    await server.ok({ action: "updateSettings", indexName: "shop", settings });
    const before = await server.ok<{ id: string }>({ action: "getIndex", indexName: "shop" });
    assert.equal((await server.call({ action: "reembedIndex", indexName: "shop" })).status, 202);
    let index: { id: string; status: string; settings: Settings };
    do {
      await new Promise((resolve) => setTimeout(resolve, 50));
      index = await server.ok({ action: "getIndex", indexName: "shop" });
    } while (index.status !== "Ready");
    assert.notEqual(index.id, before.id);
    assert.deepEqual(index.settings, settings);
    assert.equal((await search(server, { query: "refund" })).hits[0]!.id, "faq-3");
    assert.ok((await search(server, { query: "couch" })).hits.some((hit) => hit.id === "sofa-1"));

    await server.ok({ action: "deleteIndex", indexName: "shop" });
    const restored = await server.ok<{ settings: Settings }>({ action: "restoreIndex", indexName: "shop" });
    assert.deepEqual(restored.settings, settings);
    assert.equal((await search(server, { query: "refund" })).hits[0]!.pinned, true);
  });
});

Deno.test("the client's updateSettings changes settings with an Idempotency-Key, and a replay answers the same", async () => {
  await withShop(async (server) => {
    const client = new QuireClient({ baseUrl: new URL("/", server.url), projectId: "default", key: server.key });
    const settings = { synonyms: [{ from: "nyc", to: ["new york"] }] };
    const first = await client.updateSettings("shop", settings, { idempotencyKey: "settings-1" });
    assert.deepEqual(first.settings, { synonyms: settings.synonyms, pins: [] });
    const replay = await client.updateSettings("shop", settings, { idempotencyKey: "settings-1" });
    assert.deepEqual(replay, first);
    const refused = await client.updateSettings("shop", { synonyms: [{ words: ["one"] }] }).catch((error) => error);
    assert.ok(refused instanceof QuireError);
    assert.equal(refused.status, 400);
    assert.equal((await client.getIndex("shop")).settings.synonyms.length, 1);
  });
});
