/** End-to-end: the `search` action in each mode, its filters, pagination, freshness and restarts. */
import assert from "node:assert/strict";
import { Embedder } from "../../src/embedding/embedder.ts";
import type { IndexRecord } from "../../src/storage/index_records.ts";
import { docsPrefix, indexKey, snapshotPointerKey } from "../../src/storage/kv_keys.ts";
import { writeSnapshot } from "../../src/storage/snapshot_store.ts";
import { assertJsonError, startTestServer, testModels, type TestServer } from "../_helpers.ts";

interface Hit {
  id: string;
  score?: number;
  text?: string;
  metadata?: Record<string, unknown>;
}

interface SearchResult {
  hits: Hit[];
  total: number;
  tookMs: number;
}

/** A small corpus with metadata of every kind the filter language reads. */
const MOVIES = [
  {
    id: "m1",
    text: "a drama about a river",
    metadata: { genre: "drama", year: 2019, lang: "en", tags: ["sad", "long"], rating: 4.5, author: { name: "Ann" } },
  },
  {
    id: "m2",
    text: "comedy in the forest",
    metadata: { genre: "comedy", year: 2020, lang: "de", tags: ["fun"], draft: true },
  },
  { id: "m3", text: "drama and music", metadata: { genre: "drama", year: 2022, lang: "fr", tags: ["long", "music"] } },
  { id: "m4", text: "the science of storms", metadata: { genre: "documentary", year: 2024, lang: "en" } },
  { id: "m5", text: "no metadata at all" },
  { id: "m6", text: "a year written as text", metadata: { genre: "Drama", year: "2021" } },
];

async function searchOk(server: TestServer, body: Record<string, unknown>): Promise<SearchResult> {
  return await server.ok<SearchResult>({ action: "search", indexName: "movies", ...body });
}

async function withMovies(test: (server: TestServer) => Promise<void>): Promise<void> {
  await using server = await startTestServer();
  await server.ok({ action: "createIndex", indexName: "movies", docs: MOVIES });
  await test(server);
}

function assertRanked(hits: Hit[]): void {
  for (let i = 1; i < hits.length; i++) {
    const [a, b] = [hits[i - 1]!, hits[i]!];
    assert.ok(a.score! > b.score! || (a.score === b.score && a.id < b.id), `hits ${i - 1} and ${i} are out of order`);
  }
}

Deno.test("vector search ranks the doc whose text equals the query first, with cosine ≈ 1", async () => {
  await withMovies(async (server) => {
    const result = await searchOk(server, { query: "drama and music", mode: "vector" });
    assert.equal(result.hits[0]!.id, "m3");
    assert.ok(Math.abs(result.hits[0]!.score! - 1) < 1e-5, `score ${result.hits[0]!.score}`);
    assert.equal(result.total, MOVIES.length, "every document has a similarity");
    assert.equal(result.hits.length, MOVIES.length);
    assertRanked(result.hits);
    for (const hit of result.hits) assert.ok(hit.score! <= 1 && hit.score! >= -1);
    assert.deepEqual(result.hits[0], { id: "m3", score: result.hits[0]!.score, ...MOVIES[2] });
    assert.equal(typeof result.tookMs, "number");
  });
});

Deno.test("vector search embeds the query with the index's own model", async () => {
  await using server = await startTestServer();
  const docs = [{ id: "a", text: "storm over the forest" }, { id: "b", text: "music by the river" }];
  await server.ok({ action: "createIndex", indexName: "medium", docs, modelId: "svc-mediumlm" });
  const result = await server.ok<SearchResult>({
    action: "search",
    indexName: "medium",
    query: "music by the river",
    mode: "vector",
  });
  assert.equal(result.hits[0]!.id, "b");
  assert.ok(Math.abs(result.hits[0]!.score! - 1) < 1e-5);
});

Deno.test("fulltext search returns only docs holding a query term, ranked by BM25", async () => {
  await withMovies(async (server) => {
    const drama = await searchOk(server, { query: "Drama", mode: "fulltext" });
    assert.deepEqual(drama.hits.map((hit) => hit.id).sort(), ["m1", "m3"]);
    assert.equal(drama.total, 2);
    assertRanked(drama.hits);
    // "music" is rarer than "drama", so the doc holding both ranks first.
    const both = await searchOk(server, { query: "drama music", mode: "fulltext" });
    assert.deepEqual(both.hits.map((hit) => hit.id), ["m3", "m1"]);
    assert.ok(both.hits[0]!.score! > both.hits[1]!.score!);
    const exact = { mode: "fulltext", typoTolerance: false, prefix: false };
    assert.deepEqual((await searchOk(server, { query: "dram", ...exact })).hits, [], "no prefix matches");
    assert.deepEqual((await searchOk(server, { query: "drams", ...exact })).hits, [], "no typo tolerance");
    for (const query of ["dram", "drams"]) {
      const found = await searchOk(server, { query, mode: "fulltext" });
      assert.deepEqual(found.hits.map((hit) => hit.id).sort(), ["m1", "m3"], `${query}: by default, they match`);
    }
    assert.deepEqual(
      await searchOk(server, { query: "nothing-matches-this", mode: "fulltext" }).then((r) => r.total),
      0,
    );
  });
});

Deno.test("fulltext search folds case and diacritics and splits any script", async () => {
  await using server = await startTestServer();
  const docs = [{ id: "u", text: "Über das Café — Привет, мир!" }, { id: "v", text: "plain ascii words" }];
  await server.ok({ action: "createIndex", indexName: "intl", docs });
  for (const query of ["uber", "CAFE", "привет", "МИР"]) {
    const result = await server.ok<SearchResult>({ action: "search", indexName: "intl", query, mode: "fulltext" });
    assert.deepEqual(result.hits.map((hit) => hit.id), ["u"], query);
  }
});

Deno.test("hybrid search is the default and fuses BM25 and cosine into [0, 1]", async () => {
  await withMovies(async (server) => {
    const result = await searchOk(server, { query: "drama and music" });
    assert.equal(result.hits[0]!.id, "m3", "best in both parts");
    assert.equal(result.hits[0]!.score, 1);
    assert.equal(result.total, MOVIES.length);
    assertRanked(result.hits);
    for (const hit of result.hits) assert.ok(hit.score! >= 0 && hit.score! <= 1);
    const explicit = await searchOk(server, { query: "drama and music", mode: "hybrid" });
    assert.deepEqual(explicit.hits, result.hits);
  });
});

Deno.test("include picks the hit fields; metadata is absent for a doc without it", async () => {
  await withMovies(async (server) => {
    const scored = await searchOk(server, {
      query: "no metadata at all",
      mode: "vector",
      include: ["score"],
      limit: 1,
    });
    assert.deepEqual(Object.keys(scored.hits[0]!), ["id", "score"]);
    const bare = await searchOk(server, { query: "metadata", mode: "fulltext", include: [] });
    assert.deepEqual(bare.hits, [{ id: "m5" }]);
    const full = await searchOk(server, { query: "metadata", mode: "fulltext" });
    assert.deepEqual(Object.keys(full.hits[0]!), ["id", "score", "text"]);
    const withMetadata = await searchOk(server, { query: "comedy", mode: "fulltext", include: ["metadata", "text"] });
    assert.deepEqual(withMetadata.hits, [{ id: "m2", text: MOVIES[1]!.text, metadata: MOVIES[1]!.metadata }]);
  });
});

Deno.test("each filter operator selects the right documents", async (t) => {
  const cases: [string, Record<string, unknown>, string[]][] = [
    ["implicit $eq", { genre: "drama" }, ["m1", "m3"]],
    ["$eq", { genre: { $eq: "drama" } }, ["m1", "m3"]],
    ["$ne, true for a missing field", { genre: { $ne: "drama" } }, ["m2", "m4", "m5", "m6"]],
    ["$gte with $lt, numbers only", { year: { $gte: 2020, $lt: 2024 } }, ["m2", "m3"]],
    ["$gt", { year: { $gt: 2020 } }, ["m3", "m4"]],
    ["$lte", { year: { $lte: 2019 } }, ["m1"]],
    ["$gt on a float", { rating: { $gt: 4 } }, ["m1"]],
    ["$gte on strings", { year: { $gte: "2021" } }, ["m6"]],
    ["$in", { lang: { $in: ["en", "de"] } }, ["m1", "m2", "m4"]],
    ["$nin, true for a missing field", { lang: { $nin: ["en", "de"] } }, ["m3", "m5", "m6"]],
    ["$eq on an array matches any element", { tags: "long" }, ["m1", "m3"]],
    ["$in on an array", { tags: { $in: ["fun", "music"] } }, ["m2", "m3"]],
    ["$ne on an array excludes any element", { tags: { $ne: "long" } }, ["m2", "m4", "m5", "m6"]],
    ["boolean $eq", { draft: true }, ["m2"]],
    ["$exists: true", { draft: { $exists: true } }, ["m2"]],
    ["$exists: false", { draft: { $exists: false } }, ["m1", "m3", "m4", "m5", "m6"]],
    ["dotted path into nested metadata", { "author.name": "Ann" }, ["m1"]],
    ["$or", { $or: [{ genre: "comedy" }, { year: { $gte: 2024 } }] }, ["m2", "m4"]],
    ["$and", { $and: [{ genre: "drama" }, { lang: "fr" }] }, ["m3"]],
    ["several fields are and-ed", { genre: "drama", lang: "en" }, ["m1"]],
    ["types never coerce", { year: 2021 }, []],
    ["an empty filter matches everything", {}, ["m1", "m2", "m3", "m4", "m5", "m6"]],
  ];
  await withMovies(async (server) => {
    for (const [name, filter, expected] of cases) {
      await t.step(name, async () => {
        for (const mode of ["vector", "hybrid"]) {
          const result = await searchOk(server, { query: "drama", mode, filter, limit: 100 });
          assert.deepEqual(result.hits.map((hit) => hit.id).sort(), expected, mode);
          assert.equal(result.total, expected.length);
        }
        const fulltext = await searchOk(server, { query: "drama", mode: "fulltext", filter });
        assert.deepEqual(
          fulltext.hits.map((hit) => hit.id).sort(),
          expected.filter((id) => id === "m1" || id === "m3"),
        );
      });
    }
  });
});

Deno.test("filters apply before limit: a filtered page is full when enough docs match", async () => {
  await using server = await startTestServer();
  const docs = Array.from({ length: 30 }, (_, i) => ({
    id: `d${String(i).padStart(2, "0")}`,
    // The close matches to the query are the odd docs, which the filter rejects.
    text: i % 2 === 1 ? "river storm river storm" : `forest number ${i}`,
    metadata: { even: i % 2 === 0 },
  }));
  await server.ok({ action: "createIndex", indexName: "parity", docs });
  for (const mode of ["vector", "hybrid"]) {
    const result = await server.ok<SearchResult>({
      action: "search",
      indexName: "parity",
      query: "river storm river storm",
      mode,
      filter: { even: true },
      limit: 5,
    });
    assert.equal(result.hits.length, 5, mode);
    assert.equal(result.total, 15);
    assert.ok(result.hits.every((hit) => (hit.metadata as { even: boolean }).even));
  }
});

Deno.test("pages are stable, break score ties by id, and combine with filters", async () => {
  await using server = await startTestServer();
  // Equal texts give equal scores, so the order among them is the id order.
  const docs = Array.from({ length: 25 }, (_, i) => ({
    id: `p${String((i * 7) % 25).padStart(2, "0")}`,
    text: i % 3 === 0 ? "the same text" : `other words ${i % 4}`,
    metadata: { group: i % 2 },
  }));
  await server.ok({ action: "createIndex", indexName: "pages", docs });
  for (const mode of ["vector", "hybrid", "fulltext"]) {
    for (const filter of [undefined, { group: 1 }]) {
      const all = await server.ok<SearchResult>({
        action: "search",
        indexName: "pages",
        query: "the same text",
        mode,
        filter,
        limit: 100,
      });
      assertRanked(all.hits);
      const paged: Hit[] = [];
      for (let offset = 0; offset < all.total + 4; offset += 4) {
        const page = await server.ok<SearchResult>({
          action: "search",
          indexName: "pages",
          query: "the same text",
          mode,
          filter,
          limit: 4,
          offset,
        });
        assert.equal(page.total, all.total);
        paged.push(...page.hits);
      }
      assert.deepEqual(paged, all.hits, `${mode} ${JSON.stringify(filter)}`);
    }
  }
  const same = await server.ok<SearchResult>({
    action: "search",
    indexName: "pages",
    query: "the same text",
    mode: "fulltext",
    include: ["score"],
  });
  assert.deepEqual(same.hits.map((hit) => hit.id), docs.filter((_, i) => i % 3 === 0).map((d) => d.id).sort());
});

Deno.test("search sees every acknowledged write at once, and across a restart", async () => {
  let server = await startTestServer();
  try {
    await server.ok({ action: "createIndex", indexName: "fresh", docs: [{ id: "a", text: "apple orchard" }] });
    const find = async (query: string) =>
      (await server.ok<SearchResult>({ action: "search", indexName: "fresh", query, mode: "fulltext" })).hits.map((
        hit,
      ) => hit.id);
    assert.deepEqual(await find("apple"), ["a"]);
    await server.ok({ action: "addDocs", indexName: "fresh", docs: [{ id: "b", text: "apple pie" }] });
    assert.deepEqual((await find("apple")).sort(), ["a", "b"]);
    await server.ok({ action: "addDocs", indexName: "fresh", docs: [{ id: "a", text: "pear tree" }] });
    assert.deepEqual(await find("apple"), ["b"], "a replaced text is no longer found");
    assert.deepEqual(await find("pear"), ["a"]);
    await server.ok({ action: "deleteDocs", indexName: "fresh", docIds: ["b"] });
    assert.deepEqual(await find("apple"), []);
    for (const mode of ["vector", "hybrid"]) {
      const result = await server.ok<SearchResult>({ action: "search", indexName: "fresh", query: "apple pie", mode });
      assert.deepEqual(result.hits.map((hit) => hit.id), ["a"], mode);
    }

    server = await server.restart();
    assert.deepEqual(await find("pear"), ["a"]);
    assert.deepEqual(await find("apple"), []);
    await server.ok({ action: "deleteDocs", indexName: "fresh", docIds: ["a"] });
    const empty = await server.ok<SearchResult>({ action: "search", indexName: "fresh", query: "pear" });
    assert.deepEqual([empty.hits, empty.total], [[], 0]);
  } finally {
    await server.close();
  }
});

/** Queries in every mode, with and without a filter, whose answers must not depend on how the index was built. */
const PROBES = ["drama", "music river", "science of storms", "comedy", "a"].flatMap((query) =>
  ["vector", "hybrid", "fulltext"].flatMap((mode) => [
    { query, mode, limit: 100 },
    { query, mode, limit: 3, offset: 1, filter: { $or: [{ lang: "en" }, { year: { $gte: 2020 } }] } },
  ])
);

async function probe(server: TestServer): Promise<unknown[]> {
  const answers = [];
  for (const body of PROBES) {
    const { hits, total } = await searchOk(server, body);
    answers.push({ hits, total });
  }
  return answers;
}

Deno.test("results are identical when written live, loaded from snapshot and log, or rebuilt from the records", async () => {
  let server = await startTestServer();
  try {
    // Build the index through a history of writes, so that the live state saw inserts, updates and removals.
    await server.ok({ action: "createIndex", indexName: "movies", docs: MOVIES.slice(3) });
    // The new index's first snapshot lands now, so that the writes after it are left to the log. Background work
    // yields to requests, so without this wait a snapshot that started late could cover them all.
    await server.service.context.background.idle();
    await server.ok({ action: "addDocs", indexName: "movies", docs: MOVIES.slice(0, 3) });
    await server.ok({ action: "addDocs", indexName: "movies", docs: [{ id: "x", text: "drama drama" }] });
    await server.ok({ action: "addDocs", indexName: "movies", docs: [{ id: "m4", text: "a draft" }] });
    await server.ok({ action: "addDocs", indexName: "movies", docs: [MOVIES[3]] });
    await server.ok({ action: "deleteDocs", indexName: "movies", docIds: ["x"] });
    const live = await probe(server);

    server = await server.restart();
    const record = (await server.kv.get<IndexRecord>(indexKey("default", "movies"))).value!;
    const pointer = await server.kv.get<{ revision: number }>(snapshotPointerKey(record.id));
    assert.ok(pointer.value!.revision < record.revision, "the restart replays the log over the snapshot");
    assert.deepEqual(await probe(server), live, "loaded from the snapshot and the change log");

    await server.kv.delete(snapshotPointerKey(record.id));
    server = await server.restart();
    assert.deepEqual(await probe(server), live, "rebuilt from the document records");
  } finally {
    await server.close();
  }
});

Deno.test("a snapshot this version cannot read is ignored: the index loads from its records", async () => {
  let server = await startTestServer();
  const originalWarn = console.warn;
  console.warn = () => {};
  try {
    await server.ok({ action: "createIndex", indexName: "movies", docs: MOVIES });
    await server.service.context.background.idle();
    const record = (await server.kv.get<IndexRecord>(indexKey("default", "movies"))).value!;
    assert.ok(
      await writeSnapshot(server.kv, record.id, { revision: 2, pieces: [new TextEncoder().encode("old format")] }),
    );
    server = await server.restart();
    const result = await searchOk(server, { query: "drama", mode: "fulltext" });
    assert.deepEqual(result.hits.map((hit) => hit.id).sort(), ["m1", "m3"]);
  } finally {
    console.warn = originalWarn;
    await server.close();
  }
});

Deno.test("a current in-memory index is not reloaded; a write by another process is seen", async () => {
  await withMovies(async (server) => {
    const ids = async () => (await searchOk(server, { query: "drama", mode: "fulltext" })).hits.map((hit) => hit.id);
    assert.deepEqual((await ids()).sort(), ["m1", "m3"]);
    const record = await server.kv.get<IndexRecord>(indexKey("default", "movies"));
    // Remove the stored documents behind the service's back, without touching the index record.
    for await (const entry of server.kv.list({ prefix: docsPrefix(record.value!.id) })) {
      await server.kv.delete(entry.key);
    }
    await server.kv.delete(snapshotPointerKey(record.value!.id));
    assert.deepEqual((await ids()).sort(), ["m1", "m3"], "served from memory, not reloaded");
    // Another process's write moves the record on: the next search loads what storage now holds.
    await server.kv.set(record.key, { ...record.value!, revision: record.value!.revision + 1 });
    assert.deepEqual(await ids(), []);
  });
});

Deno.test("searching leaves stored vectors and rankings unchanged", async () => {
  await withMovies(async (server) => {
    const record = (await server.kv.get<IndexRecord>(indexKey("default", "movies"))).value!;
    const storedVectors = async () => {
      const heads = [];
      for await (const entry of server.kv.list<{ body: Uint8Array }>({ prefix: docsPrefix(record.id) })) {
        if (entry.key[3] === 0) heads.push([entry.key[2], [...entry.value.body]]);
      }
      return heads;
    };
    const vectorsBefore = await storedVectors();
    const first = await searchOk(server, { query: "drama and music", mode: "vector" });
    await searchOk(server, { query: "drama and music", mode: "hybrid" });
    await server.ok({ action: "getDocs", indexName: "movies" });
    await server.ok({ action: "addDocs", indexName: "movies", docs: MOVIES });
    const second = await searchOk(server, { query: "drama and music", mode: "vector" });
    assert.deepEqual(second.hits, first.hits);
    assert.deepEqual(await storedVectors(), vectorsBefore);
  });
});

Deno.test("search answers 404 for an unknown index and an empty page for an empty index", async () => {
  await using server = await startTestServer();
  const missing = await server.call({ action: "search", indexName: "nope", query: "x" });
  const error = await assertJsonError(missing, 404, /Index "nope" not found/);
  assert.equal(error.action, "search");
  await server.ok({ action: "createIndex", indexName: "empty", docs: [] });
  for (const mode of ["vector", "hybrid", "fulltext"]) {
    const result = await server.ok<SearchResult>({ action: "search", indexName: "empty", query: "x", mode });
    assert.deepEqual([result.hits, result.total], [[], 0]);
  }
  const blankVector = await server.ok<SearchResult>({
    action: "search",
    indexName: "empty",
    query: " ",
    mode: "vector",
  });
  assert.equal(blankVector.total, 0, "a blank query is allowed in vector mode");
});

Deno.test("an index embedded by another model version answers 409 to vector search and addDocs", async () => {
  let server = await startTestServer();
  try {
    await server.ok({ action: "createIndex", indexName: "movies", docs: MOVIES });
    await server.ok({ action: "createIndex", indexName: "empty", docs: [] });
    const models = await testModels();
    const upgraded = { ...models, "svc-minilm": { ...models["svc-minilm"]!, version: "tiny-minilm-2" } };
    server = await server.restart();
    await server.close();
    server = await startTestServer({
      kvPath: server.kvPath,
      key: server.key,
      embedder: () => new Embedder(upgraded, { cacheDir: `${server.kvPath}.models`, allowRemote: false }),
    });
    const pattern = /version "tiny-minilm-1" of model "svc-minilm": this server runs version "tiny-minilm-2"/;
    await assertJsonError(await server.call({ action: "search", indexName: "movies", query: "drama" }), 409, pattern);
    const empty = await server.call({ action: "search", indexName: "empty", query: "drama", mode: "vector" });
    await assertJsonError(empty, 409, pattern);
    await assertJsonError(
      await server.call({ action: "addDocs", indexName: "movies", docs: [{ id: "n", text: "new" }] }),
      409,
      pattern,
    );
    const fulltext = await searchOk(server, { query: "drama", mode: "fulltext" });
    assert.equal(fulltext.total, 2, "full-text search needs no embedding");
  } finally {
    await server.close();
  }
});

Deno.test("malformed search requests are 400 naming the field, operator or path", async (t) => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["missing query", {}, /^Missing required field "query"/],
    ["query not a string", { query: 3 }, /^Invalid "query"/],
    ["empty query in hybrid mode", { query: "" }, /^Invalid "query": must not be empty or blank in "hybrid" mode/],
    ["blank query in fulltext mode", { query: " \t\n", mode: "fulltext" }, /"fulltext" mode/],
    ["unknown mode", { query: "x", mode: "semantic" }, /^Invalid "mode"/],
    ["limit 0", { query: "x", limit: 0 }, /^Invalid "limit"/],
    ["limit 101", { query: "x", limit: 101 }, /^Invalid "limit"/],
    ["fractional limit", { query: "x", limit: 2.5 }, /^Invalid "limit"/],
    ["limit as a string", { query: "x", limit: "10" }, /^Invalid "limit"/],
    ["negative offset", { query: "x", offset: -1 }, /^Invalid "offset"/],
    ["include not an array", { query: "x", include: "text" }, /^Invalid "include"/],
    ["unknown include field", { query: "x", include: ["text", "vector"] }, /^Invalid "include\[1\]"/],
    ["filter not an object", { query: "x", filter: "genre" }, /^Invalid "filter": expected an object/],
    ["filter null", { query: "x", filter: null }, /^Invalid "filter": expected an object/],
    ["filter array", { query: "x", filter: [] }, /^Invalid "filter": expected an object/],
    [
      "unknown operator",
      { query: "x", filter: { genre: { $regex: "d" } } },
      /^Invalid "filter.genre.\$regex": unknown operator "\$regex"/,
    ],
    [
      "unknown top-level operator",
      { query: "x", filter: { $not: { a: 1 } } },
      /^Invalid "filter.\$not": unknown operator/,
    ],
    ["null value", { query: "x", filter: { genre: null } }, /^Invalid "filter.genre":.*\$exists/],
    ["array value", { query: "x", filter: { genre: ["a"] } }, /^Invalid "filter.genre":.*\$in/],
    [
      "empty operator object",
      { query: "x", filter: { genre: {} } },
      /^Invalid "filter.genre": expected at least one operator/,
    ],
    [
      "nested object value",
      { query: "x", filter: { genre: { name: "a" } } },
      /^Invalid "filter.genre.name": unknown operator "name"/,
    ],
    [
      "$eq with an object",
      { query: "x", filter: { genre: { $eq: { a: 1 } } } },
      /^Invalid "filter.genre.\$eq": expected a string, number or boolean/,
    ],
    [
      "$gt with a boolean",
      { query: "x", filter: { year: { $gt: true } } },
      /^Invalid "filter.year.\$gt": expected a number or string/,
    ],
    [
      "$in not an array",
      { query: "x", filter: { lang: { $in: "en" } } },
      /^Invalid "filter.lang.\$in": expected an array/,
    ],
    ["$in with an object", { query: "x", filter: { lang: { $in: ["en", {}] } } }, /^Invalid "filter.lang.\$in\[1\]"/],
    ["$nin with null", { query: "x", filter: { lang: { $nin: [null] } } }, /^Invalid "filter.lang.\$nin\[0\]"/],
    [
      "$exists not a boolean",
      { query: "x", filter: { a: { $exists: 1 } } },
      /^Invalid "filter.a.\$exists": expected true or false/,
    ],
    [
      "$and not an array",
      { query: "x", filter: { $and: { a: 1 } } },
      /^Invalid "filter.\$and": expected a non-empty array/,
    ],
    ["$or empty", { query: "x", filter: { $or: [] } }, /^Invalid "filter.\$or": expected a non-empty array/],
    [
      "$or with a non-object",
      { query: "x", filter: { $or: [{ a: 1 }, 2] } },
      /^Invalid "filter.\$or\[1\]": expected an object/,
    ],
    [
      "deep error path",
      { query: "x", filter: { $and: [{ $or: [{ a: { $lt: [] } }] }] } },
      /^Invalid "filter.\$and\[0\].\$or\[0\].a.\$lt"/,
    ],
    [
      "nesting too deep",
      {
        query: "x",
        filter: Array.from({ length: 20 }).reduce<Record<string, unknown>>((f) => ({ $and: [f] }), { a: 1 }),
      },
      /deeper than 16 levels/,
    ],
  ];
  await withMovies(async (server) => {
    for (const [name, body, pattern] of cases) {
      await t.step(name, async () => {
        const response = await server.call({ action: "search", indexName: "movies", ...body });
        const error = await assertJsonError(response, 400, pattern);
        assert.equal(error.action, "search");
      });
    }
  });
});
