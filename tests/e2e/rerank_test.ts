/**
 * End-to-end: `search` with `rerank`, on a generated cross-encoder run by onnxruntime. The model scores a (query, text)
 * pair by how many of the text's words the query holds, give or take 0.4 (`tools/tiny_bert.ts`, `"overlap"`), so that
 * the test can compute each hit's score, and so the order, on its own.
 */
import assert from "node:assert/strict";
import { Embedder } from "../../src/embedding/embedder.ts";
import type { ModelRegistry } from "../../src/embedding/model_registry.ts";
import {
  assertJsonError,
  startTestServer,
  temporaryDir,
  testModels,
  testRerankers,
  type TestServer,
} from "../_helpers.ts";

interface Hit {
  id: string;
  score?: number;
  text?: string;
  passage?: { text: string };
  rerankScore?: number;
}

interface SearchResult {
  hits: Hit[];
  total: number;
}

const QUERY = "red apple banana";

/** Words the model reads as single tokens (`VOCAB_WORDS`), so that the overlap with the query is a word count. */
const FRUIT = [
  { id: "f1", text: "red" },
  { id: "f2", text: "red apple banana red apple banana" },
  { id: "f3", text: "apple cheese bread milk rice soup" },
  { id: "f4", text: "red apple" },
  { id: "f5", text: "banana banana banana" },
  { id: "f6", text: "cat dog bird fish" },
  { id: "f7", text: "red red red red apple" },
];

/** How many words of `text` the query holds: what the generated cross-encoder counts. */
function overlap(text: string, query = QUERY): number {
  const words = new Set(query.split(" "));
  return text.split(" ").filter((word) => words.has(word)).length;
}

async function startRerankServer(registry?: ModelRegistry): Promise<TestServer> {
  const models = registry ?? { ...await testModels(), ...await testRerankers() };
  const cacheDir = `${await temporaryDir("quire-rerank-cache-")}/models`;
  return await startTestServer({ embedder: () => new Embedder(models, { cacheDir, allowRemote: false }) });
}

async function withFruit(test: (search: (body: Record<string, unknown>) => Promise<SearchResult>) => Promise<void>) {
  await using server = await startRerankServer();
  await server.ok({ action: "createIndex", indexName: "fruit", docs: FRUIT });
  await test((body) => server.ok<SearchResult>({ action: "search", indexName: "fruit", query: QUERY, ...body }));
}

Deno.test("rerank orders the first topN hits by the cross-encoder's score of query and text", async () => {
  await withFruit(async (search) => {
    const plain = await search({ limit: 10 });
    const reranked = await search({ limit: 10, rerank: { modelId: "svc-rerank" } });
    assert.equal(reranked.total, plain.total);
    assert.deepEqual(reranked.hits.map((hit) => hit.id).sort(), plain.hits.map((hit) => hit.id).sort());
    for (const hit of reranked.hits) {
      assert.equal(typeof hit.rerankScore, "number", hit.id);
      const expected = overlap(hit.text!);
      assert.ok(Math.abs(hit.rerankScore! - expected) < 0.4, `${hit.id}: ${hit.rerankScore} for overlap ${expected}`);
    }
    // The overlaps are distinct but for f3 and f1 (1 each), so the order is known up to those two.
    assert.deepEqual(reranked.hits.map((hit) => hit.id).slice(0, 4), ["f2", "f7", "f5", "f4"]);
    assert.deepEqual(reranked.hits.map((hit) => hit.id).at(-1), "f6");
    assert.notDeepEqual(reranked.hits.map((hit) => hit.id), plain.hits.map((hit) => hit.id));
    // Reranking keeps the hits' own fields and scores.
    const scores = new Map(plain.hits.map((hit) => [hit.id, hit.score]));
    for (const hit of reranked.hits) assert.equal(hit.score, scores.get(hit.id));
    assert.ok(plain.hits.every((hit) => hit.rerankScore === undefined));
  });
});

Deno.test("rerank rescores only the first topN hits; the rest follow in their own order without rerankScore", async () => {
  await withFruit(async (search) => {
    const plain = (await search({ limit: 10, mode: "fulltext" })).hits.map((hit) => hit.id);
    const result = await search({ limit: 10, mode: "fulltext", rerank: { modelId: "svc-rerank", topN: 3 } });
    const ids = result.hits.map((hit) => hit.id);
    assert.deepEqual(ids.slice(0, 3).sort(), plain.slice(0, 3).sort());
    assert.deepEqual(ids.slice(3), plain.slice(3));
    const top = result.hits.slice(0, 3);
    assert.ok(top.every((hit) => hit.rerankScore !== undefined));
    assert.deepEqual(top.map((hit) => hit.rerankScore), top.map((hit) => hit.rerankScore!).sort((a, b) => b - a));
    assert.ok(result.hits.slice(3).every((hit) => hit.rerankScore === undefined));
  });
});

Deno.test("offset and limit page the reranked hits, as one big reranked query orders them", async () => {
  await withFruit(async (search) => {
    const rerank = { modelId: "svc-rerank", topN: 5 };
    const whole = (await search({ limit: 10, rerank, include: [] })).hits;
    assert.equal(whole.length, FRUIT.length);
    const paged: Hit[] = [];
    for (let offset = 0; offset < FRUIT.length; offset += 2) {
      paged.push(...(await search({ offset, limit: 2, rerank, include: [] })).hits);
    }
    assert.deepEqual(paged, whole);
    assert.deepEqual((await search({ offset: 100, rerank })).hits, []);
  });
});

Deno.test("rerank reads a long document's best passage, not the start of its text", async () => {
  await using server = await startRerankServer();
  // About 700 words: past the model's 512-token window, with the only fruit in the last passage.
  const filler = Array.from({ length: 700 }, (_, i) => ["cat", "dog", "bird", "fish", "cow"][i % 5]).join(" ");
  const long = { id: "long", text: `${filler} ${FRUIT[1]!.text}` };
  await server.ok({
    action: "createIndex",
    indexName: "books",
    docs: [long, { id: "short", text: "red apple" }],
    options: { passages: { maxTokens: 64, overlapTokens: 0 } },
  });
  for (const mode of ["fulltext", "hybrid"]) {
    const { hits } = await server.ok<SearchResult>({
      action: "search",
      indexName: "books",
      query: QUERY,
      mode,
      include: ["passage"],
      rerank: { modelId: "svc-rerank" },
    });
    const hit = hits.find((hit) => hit.id === "long")!;
    const expected = overlap(hit.passage!.text);
    // In fulltext mode the best passage is the one holding the query's words; in hybrid mode, the best by vector.
    if (mode === "fulltext") assert.ok(expected >= 3, `the passage holds the query's words: ${hit.passage!.text}`);
    assert.ok(Math.abs(hit.rerankScore! - expected) < 0.4, `${mode}: ${hit.rerankScore} for overlap ${expected}`);
  }
});

Deno.test("rerank leaves a pinned hit in its place and reorders the others around it", async () => {
  await using server = await startRerankServer();
  await server.ok({ action: "createIndex", indexName: "fruit", docs: FRUIT });
  await server.ok({
    action: "updateSettings",
    indexName: "fruit",
    settings: { pins: [{ query: QUERY, ids: ["f6"] }] },
  });
  const { hits } = await server.ok<SearchResult & { hits: { pinned?: true }[] }>({
    action: "search",
    indexName: "fruit",
    query: QUERY,
    rerank: { modelId: "svc-rerank" },
  });
  assert.equal(hits[0]!.id, "f6");
  assert.equal(hits[0]!.pinned, true);
  assert.equal(hits[0]!.rerankScore, undefined);
  assert.deepEqual(hits.slice(1, 5).map((hit) => hit.id), ["f2", "f7", "f5", "f4"]);
});

Deno.test("rerank is 400 for an unknown model, a model that is not a reranker, no text query, or sort", async (t) => {
  await using server = await startRerankServer();
  await server.ok({ action: "createIndex", indexName: "fruit", docs: FRUIT });
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["an unknown model", { rerank: { modelId: "nope" } }, /^Unknown reranker "nope": use one of "svc-rerank"$/],
    ["an embedding model", { rerank: { modelId: "svc-minilm" } }, /model "svc-minilm" is not a reranker/],
    ["no modelId", { rerank: {} }, /"rerank.modelId"/],
    ["topN 0", { rerank: { modelId: "svc-rerank", topN: 0 } }, /"rerank.topN"/],
    ["topN 201", { rerank: { modelId: "svc-rerank", topN: 201 } }, /"rerank.topN"/],
    [
      "vector mode without a query",
      { query: undefined, mode: "vector", rerank: { modelId: "svc-rerank" } },
      /text "query"/,
    ],
    ["a blank query", { query: " ", mode: "vector", rerank: { modelId: "svc-rerank" } }, /"rerank": needs a text/],
    ["sort", { sort: [{ field: "year", order: "asc" }], rerank: { modelId: "svc-rerank" } }, /"rerank".*"sort"/],
    [
      "a query longer than half the model's window",
      { mode: "fulltext", query: "red ".repeat(300), rerank: { modelId: "svc-rerank" } },
      /Invalid "query": it is 300 tokens long; reranker "svc-rerank" reads queries of at most 256/,
    ],
  ];
  for (const [name, body, pattern] of cases) {
    await t.step(name, async () => {
      const response = await server.call({ action: "search", indexName: "fruit", query: QUERY, ...body });
      await assertJsonError(response, 400, pattern);
    });
  }
  await t.step("a reranker as an index's model", async () => {
    const response = await server.call({ action: "createIndex", indexName: "x", docs: [], modelId: "svc-rerank" });
    await assertJsonError(response, 400, /Unknown model "svc-rerank"/);
  });
});

Deno.test("rerank on a server without rerankers is 400, and a reranker that cannot load is 500 naming it", async () => {
  {
    await using server = await startTestServer();
    await server.ok({ action: "createIndex", indexName: "fruit", docs: FRUIT });
    const response = await server.call({
      action: "search",
      indexName: "fruit",
      query: QUERY,
      rerank: { modelId: "svc-rerank" },
    });
    await assertJsonError(response, 400, /^Unknown reranker "svc-rerank": this server has no rerankers$/);
  }
  const broken = await temporaryDir("quire-broken-rerank-");
  await using server = await startRerankServer({
    ...await testModels(),
    "svc-rerank": { kind: "reranker", source: broken, version: "broken-1" },
  });
  await server.ok({ action: "createIndex", indexName: "fruit", docs: FRUIT });
  const response = await server.call({
    action: "search",
    indexName: "fruit",
    query: QUERY,
    rerank: { modelId: "svc-rerank" },
  });
  await assertJsonError(response, 500, /^Cannot rerank with model "svc-rerank"$/);
});
