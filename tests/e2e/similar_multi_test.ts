/**
 * "More like this" (`search` with `similarTo`) and `multiSearch` (in order, and merged with `federation`) over a real
 * server: ranking by a stored document's vector without the document, paging, filters and facets, long documents by
 * their most central passage, per-query errors, scopes, aliases and tenant tokens.
 */
import assert from "node:assert/strict";
import { Embedder } from "../../src/embedding/embedder.ts";
import { QuireClient, QuireError } from "../../client.ts";
import { centralPassage } from "../../src/actions/similar_to.ts";
import { assertJsonError, startTestServer, temporaryDir, testModels, type TestServer } from "../_helpers.ts";

type Json = Record<string, unknown>;
interface Hit {
  id: string;
  score?: number;
  indexName?: string;
  queryPosition?: number;
  metadata?: Json;
}
interface Result {
  hits: Hit[];
  total: number;
  tookMs: number;
  facets?: Record<string, { value: unknown; count: number }[]>;
}
interface Federated extends Result {
  errors?: { queryPosition: number; error: string; status: number }[];
}

/** A server with the generated models and `ext-4`, an external model of 4 dimensions whose vectors clients send. */
async function startServer(): Promise<TestServer> {
  const models = { ...await testModels(), "ext-4": { dimensions: 4, version: "e1" } };
  const cacheDir = await temporaryDir("quire-similar-models-");
  return await startTestServer({ embedder: () => new Embedder(models, { cacheDir, allowRemote: false }) });
}

/** Products with their own vectors: p0 and p1 point the same way, then each one further from them. */
const PRODUCTS = [
  { id: "p0", vector: [1, 0, 0, 0], metadata: { color: "red", price: 9 } },
  { id: "p1", vector: [1, 0, 0, 0], metadata: { color: "red", price: 5, tags: ["a", "b"] } },
  { id: "p2", vector: [0.9, 0.1, 0, 0], metadata: { color: "blue", price: 7 } },
  { id: "p3", vector: [0.7, 0.3, 0, 0], metadata: { color: "red", price: 3 } },
  { id: "p4", vector: [0.2, 0.8, 0, 0], metadata: { color: "blue", price: 8 } },
  { id: "p5", vector: [0, 0, 1, 0], metadata: { color: "green", price: 1 } },
  { id: "p6", vector: [-1, 0, 0.1, 0], metadata: { color: "red", price: 2 } },
].map((product) => ({ ...product, text: `product ${product.id}` }));

async function createProducts(server: TestServer, indexName = "shop"): Promise<void> {
  await server.ok({ action: "createIndex", indexName, modelId: "ext-4", docs: PRODUCTS });
}

const ids = (result: { hits: Hit[] }) => result.hits.map((hit) => hit.id);

Deno.test("similarTo ranks the nearest documents first, as a vector search by its vector, and never itself", async () => {
  await using server = await startServer();
  await createProducts(server);
  const similar = await server.ok<Result>({ action: "search", indexName: "shop", similarTo: "p1" });
  assert.deepEqual(ids(similar), ["p0", "p2", "p3", "p4", "p5", "p6"]);
  assert.equal(similar.total, 6);
  const byVector = await server.ok<Result>({
    action: "search",
    indexName: "shop",
    mode: "vector",
    vector: [1, 0, 0, 0],
  });
  assert.deepEqual(similar.hits, byVector.hits.filter((hit) => hit.id !== "p1"), "the same hits and scores");
  // A twin with the same vector ranks first and leaves out only the document asked about.
  assert.deepEqual(ids(await server.ok<Result>({ action: "search", indexName: "shop", similarTo: "p0" })).slice(0, 2), [
    "p1",
    "p2",
  ]);
  const explicit = await server.ok<Result>({ action: "search", indexName: "shop", similarTo: "p1", mode: "vector" });
  assert.deepEqual(ids(explicit), ids(similar));
});

Deno.test("similarTo takes filters, facets, sort, paging and include like any search", async () => {
  await using server = await startServer();
  await createProducts(server);
  const search = (fields: Json) =>
    server.ok<Result>({ action: "search", indexName: "shop", similarTo: "p1", ...fields });
  const red = await search({ filter: { color: "red" }, facets: ["color", "tags"] });
  assert.deepEqual(ids(red), ["p0", "p3", "p6"]);
  assert.equal(red.total, 3);
  assert.deepEqual(red.facets, { color: [{ value: "red", count: 3 }], tags: [] }, "the document is not counted");
  const all = await search({ facets: ["color"], facetLimit: 2 });
  assert.deepEqual(all.facets, {
    color: [{ value: "red", count: 3 }, { value: "blue", count: 2 }],
  }, "red loses the document's count, and green is cut");
  const pages = [];
  for (let offset = 0; offset < 6; offset += 2) pages.push(...ids(await search({ limit: 2, offset })));
  assert.deepEqual(pages, ids(await search({ limit: 6 })), "pages agree with one big query");
  assert.deepEqual(ids(await search({ offset: 5 })), ["p6"]);
  assert.deepEqual(ids(await search({ offset: 6 })), []);
  const sorted = await search({ sort: [{ field: "price", order: "asc" }], limit: 3 });
  assert.deepEqual(ids(sorted), ["p5", "p6", "p3"]);
  assert.deepEqual((await search({ include: [], limit: 1 })).hits, [{ id: "p0" }]);
  const withPassage = await search({ include: ["passage"], limit: 1 });
  assert.deepEqual(withPassage.hits[0], { id: "p0", passage: { text: "product p0", start: 0, end: 10 } });
});

Deno.test("similarTo: 404 names an unknown document, and 400 refuses a query, a vector or another mode", async () => {
  await using server = await startServer();
  await createProducts(server);
  await server.ok({ action: "createIndex", indexName: "empty", modelId: "ext-4", docs: [] });
  const call = (fields: Json) => server.call({ action: "search", indexName: "shop", similarTo: "p1", ...fields });
  await assertJsonError(
    await call({ similarTo: "nope" }),
    404,
    /^Document "nope" not found in index "shop"$/,
  );
  await assertJsonError(
    await server.call({ action: "search", indexName: "empty", similarTo: "p1" }),
    404,
    /Document "p1" not found in index "empty"/,
  );
  await assertJsonError(
    await server.call({ action: "search", indexName: "nowhere", similarTo: "p1" }),
    404,
    /Index "nowhere" not found/,
  );
  await assertJsonError(await call({ query: "lamp" }), 400, /^Invalid "query": cannot be combined with "similarTo"/);
  await assertJsonError(await call({ vector: [1, 0, 0, 0] }), 400, /^Invalid "vector": cannot be combined/);
  await assertJsonError(await call({ mode: "hybrid" }), 400, /^Invalid "mode": must be "vector" with "similarTo"/);
  await assertJsonError(await call({ similarTo: "" }), 400, /^Invalid "similarTo"/);
});

Deno.test("similarTo on long documents ranks by the document's most central passage", async () => {
  await using server = await startServer();
  const sentence = (topic: string, i: number) => `The ${topic} report number ${i} covers ${topic} matters in detail.`;
  const long = (topic: string, count: number) =>
    Array.from({ length: count }, (_, i) => sentence(i % 3 === 0 ? "harbour" : topic, i)).join(" ");
  const docs = [
    { id: "long", text: long("river", 9) },
    { id: "other", text: long("mountain", 6) },
    ...["river", "harbour", "mountain", "forest", "desert"].map((topic, i) => ({
      id: `s${i}`,
      text: sentence(topic, i),
    })),
  ];
  await server.ok({
    action: "createIndex",
    indexName: "reports",
    docs,
    options: { passages: { maxTokens: 24, overlapTokens: 0 } },
  });
  const exported = await (await server.call({ action: "exportIndex", indexName: "reports" })).text();
  const line = exported.trim().split("\n").map((text) => JSON.parse(text)).find((doc) => doc.id === "long");
  const vectors: Float32Array[] = line.passages.map((passage: { vector: string }) =>
    new Float32Array(Uint8Array.from(atob(passage.vector), (char) => char.charCodeAt(0)).buffer)
  );
  assert.ok(vectors.length >= 3, `${vectors.length} passages`);
  const centralAt = centralPassage(vectors);
  assert.notEqual(centralAt, 0, "not simply the first passage");
  const central = vectors[centralAt]!;
  const similar = await server.ok<Result>({ action: "search", indexName: "reports", similarTo: "long" });
  const byVector = await server.ok<Result>({
    action: "search",
    indexName: "reports",
    mode: "vector",
    vector: [...central],
  });
  assert.ok(!ids(similar).includes("long"));
  assert.deepEqual(similar.hits, byVector.hits.filter((hit) => hit.id !== "long"));
  assert.equal(similar.total, docs.length - 1);
});

Deno.test("multiSearch answers each query in order, and a failing query only in its own slot", async () => {
  await using server = await startServer();
  await createProducts(server);
  await server.ok({
    action: "createIndex",
    indexName: "faq",
    docs: [{ id: "f1", text: "Reset your password in Settings" }, { id: "f2", text: "Invoices are under Billing" }],
  });
  const queries = [
    { indexName: "faq", query: "password", mode: "fulltext" },
    { indexName: "shop", similarTo: "p1", limit: 2 },
    { indexName: "nowhere", query: "x" },
    { indexName: "faq", query: "x", limit: 500 },
    { indexName: "shop", similarTo: "nope" },
    { query: "no index" },
    { indexName: "faq", query: "billing", mode: "fulltext", include: ["highlights"] },
    { indexName: "x".repeat(5_000), query: "a name too long for any index or store key" },
  ];
  const { results } = await server.ok<{ results: Json[] }>({ action: "multiSearch", queries });
  assert.equal(results.length, queries.length);
  const alone = async (query: Json) => {
    const { tookMs: _, ...rest } = await server.ok<Result>({ action: "search", ...query });
    return rest;
  };
  const withoutTime = ({ tookMs: _, ...rest }: Json) => rest;
  assert.deepEqual(withoutTime(results[0]!), await alone(queries[0]!));
  assert.deepEqual(withoutTime(results[1]!), await alone(queries[1]!));
  assert.deepEqual(results[2], { error: 'Index "nowhere" not found', status: 404 });
  assert.equal(results[3]!.status, 400);
  assert.match(String(results[3]!.error), /^Invalid "queries\[3\]\.limit": /);
  assert.deepEqual(results[4], { error: 'Document "nope" not found in index "shop"', status: 404 });
  assert.deepEqual(results[5], {
    error: 'Missing required field "queries[5].indexName": expected string, received undefined',
    status: 400,
  });
  assert.deepEqual(withoutTime(results[6]!), await alone(queries[6]!));
  assert.match(String(results[7]!.error), /^Invalid "queries\[7\]\.indexName": Too big/);
  await assertJsonError(await server.call({ action: "search", ...queries[7] }), 400, /^Invalid "indexName"/);
});

Deno.test("multiSearch takes at most 20 queries, and a federation takes no per-query paging or order", async () => {
  await using server = await startServer();
  await createProducts(server);
  const queries = (count: number) => Array.from({ length: count }, () => ({ indexName: "shop", similarTo: "p1" }));
  const twenty = await server.ok<{ results: Result[] }>({ action: "multiSearch", queries: queries(20) });
  assert.equal(twenty.results.length, 20);
  await assertJsonError(
    await server.call({ action: "multiSearch", queries: queries(21) }),
    400,
    /^Invalid "queries": must hold at most 20 queries$/,
  );
  await assertJsonError(await server.call({ action: "multiSearch", queries: [] }), 400, /at least one query/);
  for (const field of ["limit", "offset", "sort", "facets"]) {
    const value = field === "sort" ? [{ field: "price", order: "asc" }] : field === "facets" ? ["color"] : 1;
    await assertJsonError(
      await server.call({
        action: "multiSearch",
        queries: [{ indexName: "shop", similarTo: "p1" }, { indexName: "shop", similarTo: "p2", [field]: value }],
        federation: {},
      }),
      400,
      new RegExp(`^Invalid "queries\\[1\\]\\.${field}": a federated multiSearch`),
    );
  }
});

Deno.test("a federated multiSearch merges every query's hits by normalised score, each naming its index", async () => {
  await using server = await startServer();
  await createProducts(server);
  await server.ok({
    action: "createIndex",
    indexName: "shop-eu",
    modelId: "ext-4",
    docs: [
      { id: "e1", text: "eu one", vector: [1, 0.05, 0, 0] },
      { id: "e2", text: "eu two", vector: [0, 0.2, 1, 0] },
      { id: "p1", text: "the same id in another index", vector: [0.8, 0.2, 0, 0] },
    ],
  });
  await server.ok({ action: "setAlias", alias: "europe", indexName: "shop-eu" });
  const queries = [
    { indexName: "shop", mode: "vector", vector: [1, 0, 0, 0] },
    { indexName: "europe", mode: "vector", vector: [1, 0, 0, 0] },
    { indexName: "shop", similarTo: "p2" },
    { indexName: "nowhere", query: "x" },
  ];
  const merged = await server.ok<Federated>({ action: "multiSearch", queries, federation: { limit: 20 } });
  assert.deepEqual(merged.errors, [{ queryPosition: 3, error: 'Index "nowhere" not found', status: 404 }]);
  assert.equal(merged.total, 7 + 3 + 6);
  const keys = merged.hits.map((hit) => `${hit.indexName}/${hit.id}`);
  assert.equal(new Set(keys).size, keys.length, "each document once");
  assert.equal(keys.length, 7 + 3, "every document of both indexes, the same id in each");
  assert.ok(merged.hits.every((hit) => hit.indexName === "shop" || hit.indexName === "shop-eu"), "aliases resolved");
  const scores = merged.hits.map((hit) => hit.score!);
  assert.deepEqual(scores, [...scores].sort((a, b) => b - a), "best first");
  assert.ok(scores.every((score) => score >= 0 && score <= 1));
  // The best of each query scores 1; ties go by the place in their own query's order, then by the query's place.
  assert.deepEqual(keys.slice(0, 3), ["shop/p0", "shop-eu/e1", "shop/p1"]);
  const tops = merged.hits.filter((hit) => hit.score === 1).map((hit) => hit.queryPosition);
  assert.deepEqual(tops, [0, 1, 0]);
  assert.ok(merged.hits.some((hit) => hit.queryPosition === 2), "the similarTo query adds its hits");

  const page = (offset: number, limit: number) =>
    server.ok<Federated>({ action: "multiSearch", queries: queries.slice(0, 3), federation: { offset, limit } });
  const whole = (await page(0, 9)).hits;
  const paged = [...(await page(0, 4)).hits, ...(await page(4, 5)).hits];
  assert.deepEqual(paged, whole, "pages of the merged list agree with one big page");
  const idsOnly = await server.ok<Federated>({
    action: "multiSearch",
    queries: [{ indexName: "shop", similarTo: "p1", include: [] }],
    federation: { limit: 2 },
  });
  assert.deepEqual(idsOnly.hits, [
    { id: "p0", indexName: "shop", queryPosition: 0 },
    { id: "p2", indexName: "shop", queryPosition: 0 },
  ]);
  assert.equal(idsOnly.errors, undefined);
});

Deno.test("a federated multiSearch keeps each query's pinned hits ahead of every scored hit, in their order", async () => {
  await using server = await startServer();
  await createProducts(server);
  await createProducts(server, "outlet");
  await server.ok({
    action: "updateSettings",
    indexName: "outlet",
    settings: { pins: [{ query: "product", ids: ["p6", "p5"] }] },
  });
  const queries = [
    { indexName: "shop", query: "product", vector: [1, 0, 0, 0] },
    { indexName: "outlet", query: "product", vector: [1, 0, 0, 0] },
  ];
  const merged = await server.ok<Federated>({ action: "multiSearch", queries, federation: { limit: 4 } });
  const keys = merged.hits.map((hit) => `${hit.indexName}/${hit.id}`);
  assert.deepEqual(keys.slice(0, 2), ["outlet/p6", "outlet/p5"], "the pins, though they score lowest by vector");
  assert.ok(merged.hits.slice(0, 2).every((hit) => (hit as { pinned?: boolean }).pinned === true && !("score" in hit)));
  assert.ok(merged.hits.slice(2).every((hit) => typeof hit.score === "number"));
});

Deno.test("each query is authorized on its own: a scoped key's indexes and aliases, and search's right", async () => {
  await using server = await startServer();
  await createProducts(server);
  await createProducts(server, "secret");
  await server.ok({ action: "setAlias", alias: "store", indexName: "shop" });
  const keyOf = async (fields: Json) => (await server.ok<{ key: string }>({ action: "createKey", ...fields })).key;
  const scoped = await keyOf({ actions: ["search"], indexes: ["store"] });
  const asScoped = (body: Json) => server.call(body, { "x-project-key": scoped });
  const response = await asScoped({
    action: "multiSearch",
    queries: [{ indexName: "store", similarTo: "p1", limit: 1 }, { indexName: "secret", similarTo: "p1" }],
  });
  const { results } = await response.json();
  assert.equal(response.status, 200);
  assert.deepEqual(results[0].hits.map((hit: Hit) => hit.id), ["p0"]);
  assert.match(results[1].error, /^Key "k_[^"]+" may not use index "secret"$/);
  assert.equal(results[1].status, 403);
  // Unknown indexes out of scope answer as out of scope: the scope is checked first.
  const unknown = await (await asScoped({ action: "multiSearch", queries: [{ indexName: "nowhere" }] })).json();
  assert.equal(unknown.results[0].status, 403);

  const reader = await keyOf({ actions: ["getDocs"] });
  await assertJsonError(
    await server.call({ action: "multiSearch", queries: [{ indexName: "shop", similarTo: "p1" }] }, {
      "x-project-key": reader,
    }),
    403,
    /may not use action "multiSearch"/,
  );
  // multiSearch and search grant each other: one is searches, the other a multiSearch of one query.
  const multi = await keyOf({ actions: ["multiSearch"] });
  const single = await server.call({ action: "search", indexName: "shop", similarTo: "p1" }, {
    "x-project-key": multi,
  });
  assert.equal(single.status, 200);
  await single.body?.cancel();
});

Deno.test("a tenant token's filters apply to each query of a multiSearch, similarTo's document included", async () => {
  await using server = await startServer();
  await createProducts(server);
  await createProducts(server, "shop-b");
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]) as CryptoKeyPair;
  const { kty, crv, x } = await crypto.subtle.exportKey("jwk", pair.publicKey);
  const { keyId } = await server.ok<{ keyId: string }>({ action: "createKey", publicKey: { kty, crv, x } });
  const base64url = (bytes: Uint8Array) =>
    btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  const encode = (value: unknown) => base64url(new TextEncoder().encode(JSON.stringify(value)));
  const claims = {
    exp: Math.floor(Date.now() / 1000) + 600,
    indexes: { shop: { filter: { color: "red" } }, "shop-b": { filter: { color: "blue" } } },
  };
  const input = `${encode({ alg: "EdDSA", typ: "JWT", kid: keyId })}.${encode(claims)}`;
  const signature = await crypto.subtle.sign({ name: "Ed25519" }, pair.privateKey, new TextEncoder().encode(input));
  const jwt = `${input}.${base64url(new Uint8Array(signature))}`;
  const asTenant = (body: Json) => server.call(body, { "x-project-key": "", authorization: `Bearer ${jwt}` });
  const response = await asTenant({
    action: "multiSearch",
    queries: [
      { indexName: "shop", similarTo: "p1" },
      { indexName: "shop-b", similarTo: "p2" },
      { indexName: "shop", similarTo: "p2" },
    ],
  });
  const { results } = await response.json();
  assert.equal(response.status, 200, JSON.stringify(results));
  assert.deepEqual(ids(results[0]), ["p0", "p3", "p6"], "only red products");
  assert.deepEqual(ids(results[1]), ["p4"], "only blue products");
  assert.deepEqual(results[2], { error: 'Document "p2" not found in index "shop"', status: 404 }, "p2 is blue");
  const merged = await (await asTenant({
    action: "multiSearch",
    queries: [{ indexName: "shop", similarTo: "p1" }, { indexName: "shop-b", similarTo: "p2" }],
    federation: { limit: 10 },
  })).json();
  assert.deepEqual(
    merged.hits.map((hit: Hit) => `${hit.indexName}/${hit.id}`),
    ["shop/p0", "shop-b/p4", "shop/p3", "shop/p6"],
  );
});

Deno.test("the typed client searches similarTo a document and runs multiSearch, in order and federated", async () => {
  await using server = await startServer();
  await createProducts(server);
  const quire = new QuireClient({ baseUrl: new URL("/", server.url), projectId: "default", key: server.key });
  const similar = await quire.search("shop", "", { similarTo: "p1", limit: 2 });
  assert.deepEqual(ids(similar), ["p0", "p2"]);
  const { results } = await quire.multiSearch([
    { indexName: "shop", similarTo: "p1", limit: 1 },
    { indexName: "nowhere", query: "x" },
  ]);
  const [first, second] = results;
  assert.ok(first !== undefined && "hits" in first);
  assert.deepEqual(ids(first), ["p0"]);
  assert.deepEqual(second, { error: 'Index "nowhere" not found', status: 404 });
  const merged = await quire.multiSearch([{ indexName: "shop", similarTo: "p1" }], { federation: { limit: 2 } });
  assert.deepEqual(merged.hits.map((hit) => [hit.indexName, hit.id, hit.score]), [["shop", "p0", 1], [
    "shop",
    "p2",
    similar.hits[1]!.score! / similar.hits[0]!.score!,
  ]]);
  await assert.rejects(() => quire.search("shop", "lamp", { similarTo: "p1" }), (error) => {
    assert.ok(error instanceof QuireError);
    assert.equal(error.status, 400);
    return true;
  });
});
