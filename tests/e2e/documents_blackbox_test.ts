/**
 * Black-box, through `POST /manage` of a real server process only: long texts searched as passages, vectors that
 * clients send (on external models and on model-backed indexes), and both surviving a restart.
 */
import assert from "node:assert/strict";
import { assertJsonError, temporaryDir, testModels } from "../_helpers.ts";
import { TINY_BERT } from "../../tools/tiny_bert.ts";
import { ok, serverEnvironment, type ServerProcess, startServerProcess } from "../_server_process.ts";

/** The window of the generated test models, in tokens (their `max_position_embeddings` and `model_max_length`). */
const MODEL_WINDOW = 512;

/** The width of `svc-minilm`'s vectors: the hidden size of the generated tiny BERT. */
const MINILM_DIMENSIONS = TINY_BERT.hidden;

/** An external model: quire runs nothing for it, and clients send every vector. */
const EXTERNAL_MODELS = { "ext-8": { dimensions: 8, version: "ext-v1" } };

/** A sentence of words that are whole tokens of the test vocabulary and that no licence text holds. */
const NEEDLE = "The purple tiger and the yellow owl sing to the green frog under the cold moon, " +
  "while banana mango cherry lemon and peach fall on the blue ocean.";

/** A sentence of the same length and kind as {@link NEEDLE}, with none of its words but "the" and "and". */
const DECOY = "The red car and the white bus drive past the old house on the long road, " +
  "where bread cheese milk rice and soup are sold at night in the big city.";

interface PassageHit {
  text: string;
  start: number;
  end: number;
}

interface Hit {
  id: string;
  score?: number;
  text?: string;
  metadata?: Record<string, unknown>;
  passage?: PassageHit;
}

interface SearchResult {
  hits: Hit[];
  total: number;
  tookMs: number;
}

interface IndexView {
  name: string;
  status: string;
  docCount: number;
  passageCount: number;
  model: { id: string; version: string };
}

interface DocView {
  id: string;
  text: string;
  metadata?: Record<string, unknown>;
}

/** A server process over a fresh store, with the generated tiny models and the external `ext-8`. */
async function startQuire(): Promise<ServerProcess & { env: Record<string, string> }> {
  const dir = await temporaryDir("quire-blackbox-");
  const modelsFile = `${dir}/models.json`;
  await Deno.writeTextFile(modelsFile, JSON.stringify({ ...await testModels(), ...EXTERNAL_MODELS }));
  const env = { ...await serverEnvironment(modelsFile), LOG_REQUESTS: "false" };
  return Object.assign(await startServerProcess(env), { env });
}

/** Searches `indexName` and asserts a 200. */
async function search(server: ServerProcess, indexName: string, body: Record<string, unknown>): Promise<SearchResult> {
  return await ok<SearchResult>(server, { action: "search", indexName, ...body });
}

/** The index as `getIndex` shows it, without `memoryBytes`: what the answering process holds, not what is stored. */
async function getIndex(server: ServerProcess, indexName: string): Promise<IndexView> {
  const { memoryBytes: _, ...index } = await ok<IndexView & { memoryBytes?: number }>(server, {
    action: "getIndex",
    indexName,
  });
  return index;
}

let licenceWords: string[] | undefined;

/** `count` words of real prose: Debian's licence texts, or generated words where they are missing. */
function proseWords(count: number, skip = 0): string[] {
  if (licenceWords === undefined) {
    licenceWords = [];
    for (const name of ["GPL-3", "GFDL-1.3", "Apache-2.0", "MPL-2.0", "LGPL-2.1"]) {
      try {
        licenceWords.push(...Deno.readTextFileSync(`/usr/share/common-licenses/${name}`).split(/\s+/).filter(Boolean));
      } catch {
        // Not every system ships each licence; generated words fill in below.
      }
    }
    const syllables = ["ka", "lo", "mi", "nu", "re", "sa", "ti", "vo", "xe", "zu"];
    for (let n = 0; licenceWords.length < 20_000; n++) {
      licenceWords.push(`${syllables[n % 10]}${syllables[(n * 7) % 10]}${syllables[(n * 3) % 10]}${n % 2 ? "." : ""}`);
    }
  }
  return licenceWords.slice(skip, skip + count);
}

/** A long text of about 3,000 words whose last sentence is `ending` and which holds it nowhere else. */
function longText(ending: string): string {
  return `${proseWords(3000).join(" ")}. ${ending}`;
}

/** Asserts that every hit's passage is its text's slice at the passage's offsets. */
function assertPassagesAreSlices(hits: Hit[]): void {
  assert.ok(hits.length > 0, "there are hits to check");
  for (const hit of hits) {
    assert.ok(hit.passage !== undefined, `hit "${hit.id}" has a passage`);
    assert.equal(typeof hit.text, "string", `hit "${hit.id}" has its text`);
    const { text, start, end } = hit.passage;
    assert.ok(Number.isInteger(start) && Number.isInteger(end) && 0 <= start && start < end, `${start}..${end}`);
    assert.ok(end <= hit.text!.length, `passage end ${end} lies within the text of ${hit.text!.length}`);
    assert.equal(hit.text!.slice(start, end), text, `hit "${hit.id}": text.slice(start, end) is the passage`);
  }
}

/** The parts of a search result that must not change: its hits and total, not the time it took. */
function ranking(result: SearchResult): { hits: Hit[]; total: number } {
  return { hits: result.hits, total: result.total };
}

Deno.test("createIndex refuses passage settings the model cannot read, naming the limits", async (t) => {
  await using server = await startQuire();
  await t.step("maxTokens beyond the model's window", async () => {
    const response = await server.call({
      action: "createIndex",
      indexName: "too-long",
      docs: [],
      options: { passages: { maxTokens: MODEL_WINDOW + 1 } },
    });
    await assertJsonError(response, 400, new RegExp(`\\b${MODEL_WINDOW + 1}\\b[^]*\\b${MODEL_WINDOW}\\b`));
    await assertJsonError(await server.call({ action: "getIndex", indexName: "too-long" }), 404);
  });
  await t.step("overlapTokens equal to maxTokens", async () => {
    const response = await server.call({
      action: "createIndex",
      indexName: "overlap",
      docs: [],
      options: { passages: { maxTokens: 64, overlapTokens: 64 } },
    });
    await assertJsonError(response, 400, /overlapTokens[^]*\b64\b/);
    await assertJsonError(await server.call({ action: "getIndex", indexName: "overlap" }), 404);
  });
  await t.step("overlapTokens above maxTokens", async () => {
    const response = await server.call({
      action: "createIndex",
      indexName: "overlap-more",
      docs: [],
      options: { passages: { maxTokens: 64, overlapTokens: 100 } },
    });
    await assertJsonError(response, 400, /overlapTokens[^]*\b64\b/);
  });
  await t.step("the whole window, with an overlap below maxTokens, is accepted", async () => {
    await ok(server, {
      action: "createIndex",
      indexName: "widest",
      docs: [{ id: "a", text: "a short text" }],
      options: { passages: { maxTokens: MODEL_WINDOW, overlapTokens: 63 } },
    });
    assert.equal((await getIndex(server, "widest")).docCount, 1);
  });
});

Deno.test("a sentence at the end of a 3,000-word document is found by vector search, in the hit's passage", async () => {
  await using server = await startQuire();
  const docs = [
    // The twin differs only in its last sentence: an embedding of the first ~256 tokens could not tell them apart.
    { id: "a-twin", text: longText(DECOY) },
    { id: "b-needle", text: longText(NEEDLE) },
    { id: "c-short", text: proseWords(120, 4000).join(" ") },
  ];
  assert.ok(docs[1]!.text.split(/\s+/).length >= 3000);
  await ok(server, { action: "createIndex", indexName: "long", docs });
  const result = await search(server, "long", {
    query: NEEDLE,
    mode: "vector",
    include: ["text", "passage", "score"],
  });
  assert.equal(
    result.hits[0]?.id,
    "b-needle",
    `hits: ${JSON.stringify(result.hits.map(({ id, score }) => [id, score]))}`,
  );
  const passage = result.hits[0]!.passage!;
  assert.ok(passage.text.includes(NEEDLE), `the passage holds the sentence: ${JSON.stringify(passage.text)}`);
  assert.ok(passage.start > docs[1]!.text.length / 2, `the passage starts late in the text, at ${passage.start}`);
  assert.ok(
    passage.text.length < docs[1]!.text.length / 4,
    `the passage (${passage.text.length} chars) is a part of the text (${docs[1]!.text.length})`,
  );
  assertPassagesAreSlices(result.hits);

  const twin = result.hits.find((hit) => hit.id === "a-twin");
  assert.ok(twin !== undefined && twin.score! < result.hits[0]!.score!, "the twin ranks below, not tied");

  const hybrid = await search(server, "long", { query: NEEDLE, include: ["text", "passage"] });
  assert.equal(hybrid.hits[0]?.id, "b-needle");
  assert.ok(hybrid.hits[0]!.passage!.text.includes(NEEDLE), "hybrid shows the passage with the sentence too");
  assertPassagesAreSlices(hybrid.hits);
});

Deno.test("passage offsets are UTF-16 code units, past emoji and accents", async () => {
  await using server = await startQuire();
  const chunk = (i: number) => `Café 🎵 número ${i} über 𝄞 naïve 😀 façade 👩‍💻 rôle ${i}.`;
  const parts = Array.from({ length: 60 }, (_, i) => chunk(i));
  parts.splice(50, 0, "The zebra 🦓 grazes quietly by the river.");
  const text = parts.join(" ");
  await ok(server, {
    action: "createIndex",
    indexName: "unicode",
    docs: [{ id: "u", text }, { id: "plain", text: "nothing special here" }],
    options: { passages: { maxTokens: 48, overlapTokens: 8 } },
  });
  const index = await getIndex(server, "unicode");
  assert.ok(index.passageCount > 3, `the text splits into passages: ${index.passageCount}`);
  const result = await search(server, "unicode", { query: "zebra", mode: "fulltext", include: ["text", "passage"] });
  assert.equal(result.hits[0]?.id, "u");
  assertPassagesAreSlices(result.hits);
  const passage = result.hits[0]!.passage!;
  assert.ok(passage.text.includes("zebra 🦓"), `the passage holds the term: ${JSON.stringify(passage.text)}`);
  assert.ok(passage.start > 0, "the passage is not the start of the text");
  assert.equal(text.indexOf(passage.text), passage.start, "start counts UTF-16 code units, as String#slice does");
});

Deno.test("passageCount counts passages beside docCount, and deleting a long document lowers it back", async () => {
  await using server = await startQuire();
  const short = [{ id: "s1", text: "a cat on a mat" }, { id: "s2", text: "a dog in the fog" }];
  await ok(server, { action: "createIndex", indexName: "count", docs: short });
  const before = await getIndex(server, "count");
  assert.equal(before.docCount, 2);
  assert.equal(typeof before.passageCount, "number");
  assert.equal(before.passageCount, 2, "a short text is one passage");

  await ok(server, { action: "addDocs", indexName: "count", docs: [{ id: "long", text: longText(NEEDLE) }] });
  const grown = await getIndex(server, "count");
  assert.equal(grown.docCount, 3);
  assert.ok(grown.passageCount > grown.docCount, `passageCount ${grown.passageCount} > docCount ${grown.docCount}`);
  assert.ok(grown.passageCount >= before.passageCount + 10, `3,000 words make many passages: ${grown.passageCount}`);

  await ok(server, { action: "deleteDocs", indexName: "count", docIds: ["long"] });
  const after = await getIndex(server, "count");
  assert.equal(after.docCount, 2);
  assert.equal(after.passageCount, before.passageCount);

  // Smaller passages make more of them from the same text.
  await ok(server, {
    action: "createIndex",
    indexName: "count-small",
    docs: [{ id: "long", text: longText(NEEDLE) }],
    options: { passages: { maxTokens: 64, overlapTokens: 8 } },
  });
  const small = await getIndex(server, "count-small");
  assert.ok(
    small.passageCount > grown.passageCount - before.passageCount,
    `maxTokens 64 gives more passages (${small.passageCount}) than the default (${
      grown.passageCount - before.passageCount
    })`,
  );
});

Deno.test("a vector or hybrid query longer than the model's window is 400 naming the limit, never cut", async (t) => {
  await using server = await startQuire();
  await ok(server, {
    action: "createIndex",
    indexName: "queries",
    docs: [{ id: "a", text: "the cat and the dog" }, { id: "b", text: "the river in the forest" }],
  });
  const longQuery = Array.from({ length: 2000 }, (_, i) => ["cat", "dog", "river", "forest"][i % 4]).join(" ");
  for (const mode of ["vector", "hybrid"]) {
    await t.step(`${mode}: 2,000 words`, async () => {
      const response = await server.call({ action: "search", indexName: "queries", query: longQuery, mode });
      await assertJsonError(response, 400, new RegExp(`\\b${MODEL_WINDOW}\\b`));
    });
    await t.step(`${mode}: 300 words fit`, async () => {
      const fitting = longQuery.split(" ").slice(0, 300).join(" ");
      const result = await search(server, "queries", { query: fitting, mode });
      assert.equal(result.total, 2);
    });
  }
});

/** Documents of `ext-8` whose nearest by cosine, by dot product and by distance to {@link EXT_QUERY} all differ. */
const EXT_DOCS = [
  { id: "aligned", text: "north east wind", vector: [4, 4.4, 0, 0, 0, 0, 0, 0] },
  { id: "near", text: "a small step east", vector: [1, 0, 0, 0, 0, 0, 0, 0] },
  { id: "far", text: "a long way east", vector: [20, 0, 0, 0, 0, 0, 0, 0] },
  { id: "side", text: "the wind in the trees", vector: [0, 0, 1, 1, 0, 0, 0, 0] },
  { id: "opposite", text: "south west storm", vector: [-1, -1, 0, 0, 0, 0, 0, 0.1] },
];

/** Cosine puts `aligned` first, dot product `far` and distance `near`. */
const EXT_QUERY = [1, 1, 0, 0, 0, 0, 0, 0];

Deno.test("an external-model index stores client vectors and ranks vector search by cosine", async () => {
  await using server = await startQuire();
  await ok(server, { action: "createIndex", indexName: "ext", modelId: "ext-8", docs: EXT_DOCS });
  const index = await getIndex(server, "ext");
  assert.deepEqual(index.model, { id: "ext-8", version: "ext-v1" });
  assert.equal(index.docCount, EXT_DOCS.length);

  const result = await search(server, "ext", { vector: EXT_QUERY, mode: "vector", include: ["score"] });
  const ids = result.hits.map((hit) => hit.id);
  assert.equal(ids[0], "aligned", `cosine puts "aligned" first, not "far" (dot) or "near" (distance): ${ids}`);
  assert.deepEqual(ids.slice(1, 3).sort(), ["far", "near"], "near and far are at one angle");
  assert.deepEqual(ids.slice(3), ["side", "opposite"]);
  const scores = result.hits.map((hit) => hit.score!);
  assert.ok(Math.abs(scores[1]! - scores[2]!) < 1e-4, `near and far score alike: ${scores}`);
  assert.ok(scores[0]! > scores[1]! && scores[2]! > scores[3]! && scores[3]! > scores[4]!, `scores ${scores}`);
  assert.ok(Math.abs(scores[0]! - 8.4 / Math.sqrt(35.36 * 2)) < 1e-3, `the score is the cosine: ${scores[0]}`);

  // A vector beside a query: vector mode ranks by the vector alone.
  const beside = await search(server, "ext", { query: "storm", vector: [0, 0, 1, 1, 0, 0, 0, 0], mode: "vector" });
  assert.equal(beside.hits[0]?.id, "side");

  // A document with an empty text is searchable by vector; text feeds full-text only.
  await ok(server, {
    action: "addDocs",
    indexName: "ext",
    docs: [{ id: "silent", text: "", vector: [0, 0, 0, 0, 0, 0, 0, 1] }],
  });
  const silent = await search(server, "ext", { vector: [0, 0, 0, 0, 0, 0, 0.1, 1], mode: "vector" });
  assert.equal(silent.hits[0]?.id, "silent");
  const windy = await search(server, "ext", { query: "wind", mode: "fulltext" });
  assert.deepEqual(windy.hits.map((hit) => hit.id).sort(), ["aligned", "side"]);
});

Deno.test("a vector sent as vectorBase64 ranks as the same numbers do; bad base64 or both fields are 400", async () => {
  await using server = await startQuire();
  const base64Of = (vector: number[]) => new Uint8Array(new Float32Array(vector).buffer).toBase64();
  const asBase64 = EXT_DOCS.map(({ vector, ...doc }) => ({ ...doc, vectorBase64: base64Of(vector) }));
  await ok(server, { action: "createIndex", indexName: "numbers", modelId: "ext-8", docs: EXT_DOCS });
  await ok(server, { action: "createIndex", indexName: "bytes", modelId: "ext-8", docs: asBase64.slice(0, 2) });
  await ok(server, { action: "addDocs", indexName: "bytes", docs: asBase64.slice(2) });
  const ranked = async (indexName: string) =>
    (await search(server, indexName, { vector: EXT_QUERY, mode: "vector", include: ["score"] })).hits;
  assert.deepEqual(await ranked("bytes"), await ranked("numbers"), "the same hits and scores");
  // A queued write stages its documents as JSON: the decoded vectors must go there as numbers too.
  const queued = await server.call({
    action: "createIndex",
    indexName: "queued",
    modelId: "ext-8",
    docs: asBase64,
    options: { wait: false },
  });
  assert.equal(queued.status, 202, await queued.text());
  for (let tries = 0; (await getIndex(server, "queued")).status !== "Ready"; tries++) {
    assert.ok(tries < 200, "the queued createIndex ends");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.deepEqual(await ranked("queued"), await ranked("numbers"), "a queued write keeps the vectors too");

  const bad = (vectorBase64: string, vector?: number[]) =>
    server.call({ action: "addDocs", indexName: "bytes", docs: [{ id: "bad", text: "", vectorBase64, vector }] });
  await assertJsonError(await bad("not base64!"), 400, /docs\[0\]\.vectorBase64/);
  await assertJsonError(await bad(new Uint8Array(7).toBase64()), 400, /float32/);
  await assertJsonError(await bad(base64Of([1, NaN, 0, 0, 0, 0, 0, 0])), 400, /finite/);
  await assertJsonError(await bad(base64Of([1, 2, 3])), 400, /\bbad\b[^]*\b8\b/);
  await assertJsonError(await bad(base64Of(EXT_QUERY), EXT_QUERY), 400, /cannot be combined with "vector"/);
  assert.equal((await getIndex(server, "bytes")).docCount, EXT_DOCS.length, "nothing bad was written");
});

Deno.test("writes to an index that this process holds in memory count what exists exactly", async () => {
  // A process whose search state is at the index's revision reads the records of the ids it holds only: what it
  // counts as added, updated, skipped and deleted must still be what the store has.
  await using server = await startQuire();
  await ok(server, { action: "createIndex", indexName: "held", modelId: "ext-8", docs: EXT_DOCS.slice(0, 3) });
  await search(server, "held", { vector: EXT_QUERY, mode: "vector" });
  const mixed = EXT_DOCS.slice(1).map((doc) => ({ ...doc, text: `${doc.text} again` }));
  const skipped = await ok(server, { action: "addDocs", indexName: "held", docs: mixed, options: { upsert: false } });
  assert.deepEqual(skipped, { added: 2, updated: 0, skipped: 2 });
  const upserted = await ok(server, { action: "addDocs", indexName: "held", docs: mixed });
  assert.deepEqual(upserted, { added: 0, updated: 4 });
  const deleted = await ok(server, { action: "deleteDocs", indexName: "held", docIds: ["near", "ghost", "opposite"] });
  assert.deepEqual(deleted, { deleted: 2 });
  assert.deepEqual((await getIndex(server, "held")).docCount, 3);
  const texts = await search(server, "held", { query: "again", mode: "fulltext" });
  assert.deepEqual(texts.hits.map((hit) => hit.id).sort(), ["far", "side"]);
});

Deno.test("search modes on an external-model index: hybrid needs query and vector, fulltext ignores vector", async (t) => {
  await using server = await startQuire();
  await ok(server, { action: "createIndex", indexName: "ext", modelId: "ext-8", docs: EXT_DOCS });
  await t.step("vector mode without a vector is 400", async () => {
    const response = await server.call({ action: "search", indexName: "ext", query: "wind", mode: "vector" });
    await assertJsonError(response, 400, /vector/);
  });
  await t.step("hybrid with a query and no vector is 400", async () => {
    const response = await server.call({ action: "search", indexName: "ext", query: "wind", mode: "hybrid" });
    await assertJsonError(response, 400, /vector/);
  });
  await t.step("hybrid (the default mode) with a vector and no query is 400", async () => {
    const response = await server.call({ action: "search", indexName: "ext", vector: EXT_QUERY });
    await assertJsonError(response, 400, /query/);
  });
  await t.step("hybrid with both uses both", async () => {
    const result = await search(server, "ext", { query: "storm", vector: EXT_QUERY, mode: "hybrid" });
    const ids = result.hits.map((hit) => hit.id);
    assert.ok(ids.includes("opposite"), "the full-text match is found");
    assert.ok(ids.includes("aligned"), "the nearest vector is found");
    assert.equal(result.total, EXT_DOCS.length);
  });
  await t.step("fulltext ignores a vector", async () => {
    const plain = await search(server, "ext", { query: "east", mode: "fulltext" });
    const withVector = await search(server, "ext", {
      query: "east",
      mode: "fulltext",
      vector: [0, 0, 0, 0, 0, 0, 0, 1],
    });
    assert.deepEqual(ranking(withVector), ranking(plain));
    assert.deepEqual(plain.hits.map((hit) => hit.id).sort(), ["aligned", "far", "near"]);
  });
  await t.step("a query vector of the wrong length is 400 naming the dimensions", async () => {
    const response = await server.call({ action: "search", indexName: "ext", vector: [1, 2, 3], mode: "vector" });
    await assertJsonError(response, 400, /\b8\b/);
  });
});

Deno.test("a batch with a missing or misshapen vector is 400 naming the document and dimensions, and writes nothing", async (t) => {
  await using server = await startQuire();
  const good = { id: "good", text: "fine", vector: [1, 0, 0, 0, 0, 0, 0, 0] };
  await t.step("createIndex with a document without a vector", async () => {
    const response = await server.call({
      action: "createIndex",
      indexName: "ext-new",
      modelId: "ext-8",
      docs: [good, { id: "no-vector-here", text: "words only" }],
    });
    await assertJsonError(response, 400, /"?no-vector-here"?[^]*\b8\b|\b8\b[^]*no-vector-here/);
    await assertJsonError(await server.call({ action: "getIndex", indexName: "ext-new" }), 404);
  });
  await ok(server, { action: "createIndex", indexName: "ext", modelId: "ext-8", docs: [good] });
  const cases = [
    { name: "addDocs with a document without a vector", bad: { id: "lacks-vector", text: "no vector" } },
    { name: "addDocs with a vector too short", bad: { id: "short-vector", text: "three", vector: [1, 2, 3] } },
    {
      name: "addDocs with a vector too long",
      bad: { id: "long-vector", text: "", vector: [1, 2, 3, 4, 5, 6, 7, 8, 9] },
    },
  ];
  for (const { name, bad } of cases) {
    await t.step(name, async () => {
      const newcomer = { id: `new-before-${bad.id}`, text: "would be new", vector: [0, 1, 0, 0, 0, 0, 0, 0] };
      const changed = { ...good, text: "changed text" };
      const response = await server.call({ action: "addDocs", indexName: "ext", docs: [newcomer, changed, bad] });
      await assertJsonError(response, 400, new RegExp(`${bad.id}[^]*\\b8\\b|\\b8\\b[^]*${bad.id}`));
      const index = await getIndex(server, "ext");
      assert.equal(index.docCount, 1, "nothing of the batch was written");
      assert.deepEqual(await ok<DocView[]>(server, { action: "getDocs", indexName: "ext" }), [
        { id: "good", text: "fine" },
      ]);
    });
  }
  await t.step("a vector of the wrong length on a model-backed index", async () => {
    await ok(server, { action: "createIndex", indexName: "model", docs: [{ id: "m", text: "a cat" }] });
    const response = await server.call({
      action: "addDocs",
      indexName: "model",
      docs: [{ id: "fresh", text: "a dog" }, { id: "odd-width", text: "a bird", vector: [1, 2] }],
    });
    await assertJsonError(response, 400, new RegExp(`odd-width[^]*\\b${MINILM_DIMENSIONS}\\b`));
    assert.equal((await getIndex(server, "model")).docCount, 1);
    const docs = await ok<DocView[]>(server, { action: "getDocs", indexName: "model" });
    assert.deepEqual(docs.map((doc) => doc.id), ["m"]);
  });
});

Deno.test("a model-backed index takes a document's own vector of the model's width, and a query's", async () => {
  await using server = await startQuire();
  const docs = [
    { id: "cat", text: "the cat sleeps on the bed" },
    { id: "river", text: "a river runs to the sea" },
    { id: "music", text: "music and song at night" },
  ];
  await ok(server, { action: "createIndex", indexName: "own", docs });
  // A vector no text of the test model would embed to.
  const own = Array.from({ length: MINILM_DIMENSIONS }, (_, i) => (i % 3 === 0 ? 1 : i % 3 === 1 ? -0.5 : 0.25));
  await ok(server, {
    action: "addDocs",
    indexName: "own",
    docs: [{ id: "client", text: "the cat sleeps on the bed", vector: own }],
  });
  assert.equal((await getIndex(server, "own")).docCount, 4);
  const byVector = await search(server, "own", { vector: own, mode: "vector", include: ["score"] });
  assert.equal(byVector.hits[0]?.id, "client", "the client's vector is what is stored");
  assert.ok(Math.abs(byVector.hits[0]!.score! - 1) < 1e-4, `its own vector has cosine 1: ${byVector.hits[0]!.score}`);

  // Its text was not embedded in place of the vector: the query of the same text finds "cat" first, not a tie.
  const byText = await search(server, "own", {
    query: "the cat sleeps on the bed",
    mode: "vector",
    include: ["score"],
  });
  assert.equal(byText.hits[0]?.id, "cat");
  const client = byText.hits.find((hit) => hit.id === "client")!;
  assert.ok(byText.hits[0]!.score! - client.score! > 1e-3, `scores ${JSON.stringify(byText.hits)}`);

  // A query vector beside the query: vector mode ranks by the vector, not the text.
  const beside = await search(server, "own", { query: "music and song at night", vector: own, mode: "vector" });
  assert.equal(beside.hits[0]?.id, "client");

  // Full-text still reads the text of a document that brought its vector.
  const sleeps = await search(server, "own", { query: "sleeps", mode: "fulltext" });
  assert.deepEqual(sleeps.hits.map((hit) => hit.id).sort(), ["cat", "client"]);
});

Deno.test("passages, external vectors and client vectors survive a restart of the server process", async () => {
  const first = await startQuire();
  const { env, key } = first;
  const ownVector = Array.from({ length: MINILM_DIMENSIONS }, (_, i) => Math.sin(i + 1));
  const searches: [string, Record<string, unknown>][] = [
    ["long", { query: NEEDLE, mode: "vector", include: ["text", "passage", "score"] }],
    ["long", { query: NEEDLE, include: ["passage", "score"] }],
    ["long", { query: "license", mode: "fulltext", include: ["passage", "score"] }],
    ["long", { vector: ownVector, mode: "vector", include: ["score"] }],
    ["ext", { vector: EXT_QUERY, mode: "vector", include: ["score", "text"] }],
    ["ext", { query: "storm", vector: EXT_QUERY, include: ["score"] }],
    ["ext", { query: "east", mode: "fulltext", include: ["score"] }],
  ];
  const before: { hits: Hit[]; total: number }[] = [];
  const indexesBefore: IndexView[] = [];
  try {
    await ok(first, {
      action: "createIndex",
      indexName: "long",
      docs: [
        { id: "a-twin", text: longText(DECOY) },
        { id: "b-needle", text: longText(NEEDLE) },
        { id: "client", text: "a license of its own", vector: ownVector },
      ],
      options: { passages: { maxTokens: 128, overlapTokens: 16 } },
    });
    await ok(first, { action: "createIndex", indexName: "ext", modelId: "ext-8", docs: EXT_DOCS });
    await ok(first, { action: "deleteDocs", indexName: "ext", docIds: ["side"] });
    for (const [indexName, body] of searches) before.push(ranking(await search(first, indexName, body)));
    for (const name of ["long", "ext"]) indexesBefore.push(await getIndex(first, name));
    assert.equal(before[0]!.hits[0]?.id, "b-needle");
    assert.ok(before[0]!.hits[0]!.passage!.text.includes(NEEDLE));
    assert.equal(before[3]!.hits[0]?.id, "client");
    assert.equal(before[4]!.hits[0]?.id, "aligned");
    assert.ok(indexesBefore[0]!.passageCount > indexesBefore[0]!.docCount);
  } finally {
    assert.equal(await first.stop("SIGTERM"), 0);
  }

  await using second = await startServerProcess(env, key);
  for (const [i, name] of ["long", "ext"].entries()) {
    assert.deepEqual(await getIndex(second, name), indexesBefore[i], `index "${name}" after the restart`);
  }
  for (const [i, [indexName, body]] of searches.entries()) {
    const after = ranking(await search(second, indexName, body));
    assert.deepEqual(after, before[i], `search ${JSON.stringify(body).slice(0, 80)} after the restart`);
  }
});
