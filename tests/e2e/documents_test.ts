/** Long texts as passages, documents' own vectors, and re-embedding: the splitter, the write path and the job. */
import assert from "node:assert/strict";
import { Embedder, type ModelTokens } from "../../src/embedding/embedder.ts";
import { splitPassages } from "../../src/passages/split_passages.ts";
import type { IndexRecord } from "../../src/storage/index_records.ts";
import { indexKey } from "../../src/storage/kv_keys.ts";
import type { PassageSpan } from "../../src/search/indexed_doc.ts";
import { assertJsonError, startTestServer, testModels, type TestServer } from "../_helpers.ts";
import { VOCAB_WORDS } from "../../tools/tiny_bert.ts";

/**
 * Sentences of vocabulary words (so that the tiny model knows them), `count` of them, each `shortest` to `longest`
 * words long.
 */
function prose(count: number, seed = 1, shortest = 8, longest = 20): string {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: count }, () => {
    const words = Array.from({ length: shortest + Math.floor(next() * (longest - shortest + 1)) }, () => {
      return VOCAB_WORDS[Math.floor(next() * VOCAB_WORDS.length)]!;
    });
    const sentence = words.join(" ");
    return `${sentence[0]!.toUpperCase()}${sentence.slice(1)}.`;
  }).join(" ");
}

async function tinyTokens() {
  const embedder = new Embedder(await testModels(), { cacheDir: "/tmp/quire-unused", allowRemote: false });
  return { embedder, tokens: await embedder.tokens("svc-minilm") };
}

Deno.test("passages fit the window, cover the text in order, and overlap at sentence ends", async () => {
  const { embedder, tokens } = await tinyTokens();
  try {
    const text = prose(200);
    for (const settings of [{ maxTokens: 64, overlapTokens: 16 }, { maxTokens: 256, overlapTokens: 32 }]) {
      const spans = splitPassages(text, tokens, settings);
      assert.ok(spans.length > 3, `${spans.length} passages`);
      assert.equal(spans[0]!.start, 0);
      assert.equal(spans.at(-1)!.end, text.length);
      spans.forEach(({ start, end }, i) => {
        const length = tokens.count([text.slice(start, end)])[0]! + tokens.specialTokens;
        assert.ok(length <= settings.maxTokens, `passage ${i} has ${length} tokens`);
        if (i === 0) return;
        const previous = spans[i - 1]!;
        assert.ok(start > previous.start && start < previous.end, `passage ${i} overlaps the one before`);
        assert.match(text.slice(start - 2, start), /\. $/, `passage ${i} starts at a sentence`);
      });
    }
    const blob = "x".repeat(5000);
    const pieces = splitPassages(blob, tokens, { maxTokens: 32, overlapTokens: 0 });
    assert.equal(pieces.map(({ start, end }) => blob.slice(start, end)).join(""), blob, "a word longer than a passage");
    for (const { start, end } of pieces) assert.ok(tokens.count([blob.slice(start, end)])[0]! <= 30);
    assert.deepEqual(splitPassages("", tokens, { maxTokens: 64, overlapTokens: 8 }), [{ start: 0, end: 0 }]);
  } finally {
    await embedder.dispose();
  }
});

/**
 * Asserts that every passage of `text` after the first starts at a word inside the one before, repeats at most
 * `overlapTokens` of its tokens, and goes on past it; returns how many tokens each repeats.
 */
function assertWordOverlaps(text: string, spans: PassageSpan[], tokens: ModelTokens, overlapTokens: number): number[] {
  return spans.slice(1).map(({ start, end }, i) => {
    const previous = spans[i]!;
    assert.ok(start > previous.start && start < previous.end, `passage ${i + 1} starts inside the one before`);
    assert.ok(end > previous.end, `passage ${i + 1} holds text that the one before does not`);
    assert.match(text.slice(start - 1, start + 1), /^\s\S/, `passage ${i + 1} starts at a word`);
    const repeated = tokens.count([text.slice(start, previous.end)])[0]!;
    assert.ok(repeated <= overlapTokens, `passage ${i + 1} repeats ${repeated} tokens, more than ${overlapTokens}`);
    return repeated;
  });
}

Deno.test("unpunctuated text overlaps by overlapTokens of words, and its last sentence stays whole", async () => {
  const { embedder, tokens } = await tinyTokens();
  try {
    // Words the tiny model knows, so that the sentence is fewer tokens than the overlap of 32.
    const ending = "the red fox swim into the green forest to the old house by the lake";
    const text = `${prose(300).replace(/[.]/g, "").toLowerCase()} ${ending}`;
    assert.ok(text.split(" ").length > 4_000);
    assert.ok(tokens.count([ending])[0]! <= 32, `the ending has ${tokens.count([ending])[0]} tokens`);
    for (const settings of [{ maxTokens: 256, overlapTokens: 32 }, { maxTokens: 64, overlapTokens: 16 }]) {
      const spans = splitPassages(text, tokens, settings);
      assert.ok(spans.length > 10, `${spans.length} passages`);
      assert.equal(spans.at(-1)!.end, text.length);
      const longestWord = Math.max(...tokens.count(text.match(/\S+/g)!));
      for (const repeated of assertWordOverlaps(text, spans, tokens, settings.overlapTokens)) {
        assert.ok(repeated > settings.overlapTokens - longestWord, `a passage repeats only ${repeated} tokens`);
      }
    }
    const spans = splitPassages(text, tokens, { maxTokens: 256, overlapTokens: 32 });
    assert.ok(spans.some(({ start, end }) => text.slice(start, end).includes(ending)), "a passage holds it whole");
  } finally {
    await embedder.dispose();
  }
});

Deno.test("sentences longer than half a passage overlap by their last words", async () => {
  const { embedder, tokens } = await tinyTokens();
  try {
    const settings = { maxTokens: 64, overlapTokens: 16 };
    const text = prose(40, 3, 40, 90);
    const sentences = text.split(/(?<=\.) /);
    const least = Math.min(...tokens.count(sentences));
    assert.ok(least > settings.maxTokens / 2, `every sentence is more than half a passage: the shortest has ${least}`);
    const spans = splitPassages(text, tokens, settings);
    assert.ok(spans.length > 10, `${spans.length} passages`);
    assertWordOverlaps(text, spans, tokens, settings.overlapTokens);
  } finally {
    await embedder.dispose();
  }
});

Deno.test("a long document is found by its last passage, which the hit names; updates and deletes count passages", async () => {
  await using server = await startTestServer();
  const ending = "copper lantern harbor orchard velvet";
  const long = `${prose(300, 7)} ${ending}.`;
  await server.ok({
    action: "createIndex",
    indexName: "long",
    options: { passages: { maxTokens: 96, overlapTokens: 16 } },
    docs: [{ id: "long", text: long }, { id: "short", text: prose(2, 3) }],
  });
  const index = await server.ok<{ docCount: number; passageCount: number }>({ action: "getIndex", indexName: "long" });
  assert.equal(index.docCount, 2);
  assert.ok(index.passageCount > 20, `${index.passageCount} passages`);
  type Hit = { id: string; text: string; passage: { text: string; start: number; end: number } };
  for (const mode of ["vector", "hybrid", "fulltext"]) {
    const found = await server.ok<{ hits: Hit[] }>({
      action: "search",
      indexName: "long",
      query: ending,
      mode,
      include: ["text", "passage"],
    });
    const hit = found.hits[0]!;
    assert.equal(hit.id, "long", mode);
    assert.equal(hit.text.slice(hit.passage.start, hit.passage.end), hit.passage.text, mode);
    assert.ok(hit.passage.text.includes(ending), `${mode}: the best passage holds the words`);
  }
  const plain = await server.ok<{ hits: Record<string, unknown>[] }>({
    action: "search",
    indexName: "long",
    query: "x",
  });
  assert.equal(plain.hits[0]!.passage, undefined, "passages only on request");
  await server.ok({ action: "addDocs", indexName: "long", docs: [{ id: "long", text: "now short" }] });
  const updated = await server.ok<{ passageCount: number }>({ action: "getIndex", indexName: "long" });
  assert.equal(updated.passageCount, 2);
  await server.ok({ action: "deleteDocs", indexName: "long", docIds: ["long"] });
  const deleted = await server.ok<{ passageCount: number }>({ action: "getIndex", indexName: "long" });
  assert.equal(deleted.passageCount, 1);
});

Deno.test("passage settings and queries beyond the model's window are 400 naming the limits", async () => {
  await using server = await startTestServer();
  const create = (passages: Record<string, number>) =>
    server.call({ action: "createIndex", indexName: "p", docs: [], options: { passages } });
  await assertJsonError(await create({ maxTokens: 1000 }), 400, /maxTokens.*1000.*10 to 512 tokens/);
  await assertJsonError(await create({ maxTokens: 64, overlapTokens: 64 }), 400, /overlapTokens.*less than.*64/);
  await server.ok({ action: "createIndex", indexName: "q", docs: [{ id: "a", text: "a lantern" }] });
  const long = await server.call({ action: "search", indexName: "q", query: "lantern ".repeat(600), mode: "vector" });
  await assertJsonError(long, 400, /"query".*\d{4} tokens.*at most 512/);
  const fulltext = await server.call({
    action: "search",
    indexName: "q",
    query: "lantern ".repeat(600),
    mode: "fulltext",
  });
  assert.equal(fulltext.status, 200, "full-text search reads the whole query");
});

Deno.test("reembedIndex moves an index to the version the server runs; writes go on meanwhile, deleteIndex waits", async () => {
  let server: TestServer = await startTestServer();
  try {
    const docs = Array.from({ length: 40 }, (_, i) => ({ id: `d${i}`, text: prose(3, i + 1) }));
    await server.ok({ action: "createIndex", indexName: "movies", docs });
    const query = { action: "search", indexName: "movies", query: docs[5]!.text, mode: "vector" };
    const before = await server.ok<{ hits: { id: string }[] }>(query);
    const models = await testModels();
    const upgraded = { ...models, "svc-minilm": { ...models["svc-minilm"]!, version: "tiny-minilm-2" } };
    await server.close();
    server = await startTestServer({
      kvPath: server.kvPath,
      key: server.key,
      embedder: () => new Embedder(upgraded, { cacheDir: `${server.kvPath}.models`, allowRemote: false }),
    });
    await assertJsonError(await server.call(query), 409, /reembedIndex|this server runs version "tiny-minilm-2"/);
    const queued = await server.call({ action: "reembedIndex", indexName: "movies" });
    assert.equal(queued.status, 202);
    assert.equal((await queued.json()).status, "Updating");
    const ready = await waitReady(server, "movies");
    assert.deepEqual(ready.model, { id: "svc-minilm", version: "tiny-minilm-2" });
    assert.equal(ready.docCount, 40);
    const after = await server.ok<{ hits: { id: string }[] }>(query);
    assert.deepEqual(after.hits.map((hit) => hit.id), before.hits.map((hit) => hit.id), "the same weights rank alike");
    // While a re-embedding job runs, writes go on (the job copies them), and only deleteIndex waits with 409.
    const entry = await server.kv.get<IndexRecord>(indexKey("default", "movies"));
    const job = { id: "0000000000-x", kind: "reembed", state: "running", done: 0, total: 40 } as const;
    await server.kv.set(entry.key, { ...entry.value!, job, revision: entry.value!.revision + 1 });
    await server.ok({ action: "addDocs", indexName: "movies", docs: [{ id: "n", text: "new" }] });
    await server.ok({ action: "deleteDocs", indexName: "movies", docIds: ["d1"] });
    const blocked = await server.call({ action: "deleteIndex", indexName: "movies" });
    assert.equal(blocked.headers.get("retry-after"), "5");
    await assertJsonError(blocked, 409, /being re-embedded/);
    const searching = await server.ok<{ hits: unknown[] }>(query);
    assert.equal(searching.hits.length, 10, "search answers from the current vectors meanwhile");
  } finally {
    await server.close();
  }
});

Deno.test("reembedIndex moves an index to another model, and refuses external models", async () => {
  await using server = await startTestServer();
  await server.ok({ action: "createIndex", indexName: "m", docs: [{ id: "a", text: prose(4) }] });
  const queued = await server.call({ action: "reembedIndex", indexName: "m", modelId: "svc-mediumlm" });
  assert.equal(queued.status, 202);
  const ready = await waitReady(server, "m");
  assert.equal(ready.model.id, "svc-mediumlm");
  const found = await server.ok<{ hits: { id: string }[] }>({
    action: "search",
    indexName: "m",
    query: "anything",
    mode: "vector",
  });
  assert.deepEqual(found.hits.map((hit) => hit.id), ["a"]);
  await assertJsonError(await server.call({ action: "reembedIndex", indexName: "m", modelId: "nope" }), 400, /nope/);
  await assertJsonError(await server.call({ action: "reembedIndex", indexName: "gone" }), 404);
});

interface IndexView {
  status: string;
  docCount: number;
  model: { id: string; version: string };
}

async function waitReady(server: TestServer, indexName: string): Promise<IndexView> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const view = await server.ok<IndexView>({ action: "getIndex", indexName });
    if (view.status === "Ready") return view;
    if (Date.now() > deadline) throw new Error(`Still ${JSON.stringify(view)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
