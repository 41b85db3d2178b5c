/**
 * Cross-encoders on a generated model (real onnxruntime inference through transformers.js), their registry entries,
 * and the reranking of a page of hits. The model scores a (query, text) pair by how many of the text's words the query
 * holds, give or take 0.4 (`tools/tiny_bert.ts`, `"overlap"`).
 */
import assert from "node:assert/strict";
import { AutoModelForSequenceClassification, AutoTokenizer } from "@huggingface/transformers";
import { CrossEncoders } from "../../src/embedding/cross_encoder.ts";
import { CrossEncoderError } from "../../src/embedding/cross_encoder_pairs.ts";
import { CrossEncoderWorkers } from "../../src/embedding/cross_encoder_workers.ts";
import { Embedder } from "../../src/embedding/embedder.ts";
import { BUILT_IN_MODELS, type ModelRegistry, readModelRegistry } from "../../src/embedding/model_registry.ts";
import type { EmbeddingBackend } from "../../src/embedding/transformers_runtime.ts";
import { checkedRerank, rerankedPage } from "../../src/reranking/rerank_hits.ts";
import { SearchIndex } from "../../src/search/search_index.ts";
import { temporaryDir, testModels, testRerankers } from "../_helpers.ts";

const QUERY = "red apple banana";
const WORDS = ["red", "apple", "banana", "cat", "dog", "bird", "fish", "milk"];

/** How many words of `text` the query holds: what the generated cross-encoder counts. */
function overlap(text: string): number {
  const words = new Set(QUERY.split(" "));
  return text.split(" ").filter((word) => words.has(word)).length;
}

/** The test reranker with float32 weights: its scores do not depend on what else shares a batch, as q8's do. */
async function fp32Rerankers(): Promise<ModelRegistry> {
  return { "svc-rerank": { ...(await testRerankers())["svc-rerank"]!, dtype: "fp32" } };
}

async function crossEncoders(backend: EmbeddingBackend = "native", registry?: ModelRegistry) {
  const cacheDir = `${await temporaryDir("quire-cross-encoder-")}/models`;
  const encoders = new CrossEncoders(registry ?? await fp32Rerankers(), { cacheDir, allowRemote: false, backend });
  return Object.assign(encoders, { [Symbol.asyncDispose]: () => encoders.dispose() });
}

Deno.test("scores count the query's words in each text, in the order of the texts, across batches", async () => {
  await using encoders = await crossEncoders();
  // 60 texts of 1 to 12 words: more than one batch, and batches that sort them by length.
  const texts = Array.from(
    { length: 60 },
    (_, i) => Array.from({ length: 1 + (i * 7) % 12 }, (_, j) => WORDS[(i * 5 + j * 3) % WORDS.length]).join(" "),
  );
  const scores = await encoders.score("svc-rerank", QUERY, texts);
  assert.equal(scores.length, texts.length);
  texts.forEach((text, i) => {
    assert.ok(Math.abs(scores[i]! - overlap(text)) < 0.4, `text ${i} "${text}": ${scores[i]}`);
  });
  // A text scores the same alone as in a batch.
  const [alone] = await encoders.score("svc-rerank", QUERY, [texts[7]!]);
  assert.ok(Math.abs(alone! - scores[7]!) < 1e-4);
  // Concurrent calls take turns, and each gets its own scores.
  const [a, b] = await Promise.all([
    encoders.score("svc-rerank", QUERY, texts.slice(0, 30)),
    encoders.score("svc-rerank", "cat", texts.slice(30)),
  ]);
  a.forEach((score, i) => assert.ok(Math.abs(score - scores[i]!) < 1e-4, `text ${i}`));
  texts.slice(30).forEach((text, i) => {
    assert.ok(Math.abs(b[i]! - text.split(" ").filter((word) => word === "cat").length) < 0.4, text);
  });
});

Deno.test("scores equal the model's own logits over transformers.js's padded batch of pairs", async () => {
  const q8 = await testRerankers();
  const spec = q8["svc-rerank"];
  await using encoders = await crossEncoders("native", q8);
  const texts = ["red", "a much longer text about apple and banana and the red cat", "dog"];
  const ours = await encoders.score("svc-rerank", QUERY, texts);
  const tokenizer = await AutoTokenizer.from_pretrained(spec!.source!);
  const model = await AutoModelForSequenceClassification.from_pretrained(spec!.source!, { dtype: "q8" });
  try {
    const inputs = tokenizer(texts.map(() => QUERY), { text_pair: texts, padding: true });
    const { logits } = await model(inputs);
    assert.deepEqual(logits.dims, [3, 1]);
    texts.forEach((_, i) => {
      assert.ok(Math.abs(ours[i]! - (logits.data as Float32Array)[i]!) < 1e-4, `text ${i}`);
    });
  } finally {
    await model.dispose();
  }
});

Deno.test("a pair longer than the model's window loses the end of its text, never the query", async () => {
  await using encoders = await crossEncoders();
  const { window } = await encoders.tokens("svc-rerank");
  assert.equal(window, 512);
  const filler = Array.from({ length: 600 }, (_, i) => WORDS[3 + i % 5]).join(" ");
  const [score] = await encoders.score("svc-rerank", QUERY, [`red apple ${filler} banana banana`]);
  assert.ok(Math.abs(score! - 2) < 0.4, `only "red apple" is read: ${score}`);
});

Deno.test("the wasm backend scores as the native one", async () => {
  await using native = await crossEncoders("native");
  await using wasm = await crossEncoders("wasm");
  const texts = ["red apple", "cat dog banana", "milk"];
  const [a, b] = [await native.score("svc-rerank", QUERY, texts), await wasm.score("svc-rerank", QUERY, texts)];
  texts.forEach((_, i) => assert.ok(Math.abs(a[i]! - b[i]!) < 1e-4, `text ${i}: ${a[i]} and ${b[i]}`));
});

Deno.test("a worker that dies fails every call waiting on it and every later one, with a CrossEncoderError", async (t) => {
  const load = { source: "unused", local: true, dtype: "q8" as const, cacheDir: "unused", allowRemote: false };
  const script = new URL("../_dying_cross_encoder_worker.ts", import.meta.url);
  for (const [query, cause] of [["exit", /exited with code 3/], ["throw", /failed on "throw"/]] as const) {
    await t.step(query, async () => {
      let stopped = 0;
      const onStop = () => stopped++;
      const { workers, window } = await CrossEncoderWorkers.open("svc-rerank", load, { workers: 2, onStop, script });
      assert.equal(window, 16);
      try {
        const calls = await Promise.allSettled([1, 2, 3].map((i) => workers.run(query, [`text ${i}`])));
        for (const call of [...calls, ...await Promise.allSettled([workers.run("later", ["text"])])]) {
          assert.equal(call.status, "rejected");
          const error = (call as PromiseRejectedResult).reason;
          assert.ok(error instanceof CrossEncoderError);
          assert.match(error.message, /^Reranker "svc-rerank" stopped$/);
          assert.match(String(error.cause), cause);
        }
        assert.equal(stopped, 1);
      } finally {
        await workers.dispose();
      }
    });
  }
});

Deno.test("rerankers are registry entries of kind reranker, which the embedder does not serve", async () => {
  const dir = await temporaryDir("quire-registry-");
  const write = async (registry: unknown) => {
    const path = `${dir}/${crypto.randomUUID()}.json`;
    await Deno.writeTextFile(path, JSON.stringify(registry));
    return path;
  };
  const minilm = { source: "a", version: "1" };
  const good = { "svc-minilm": minilm, "svc-rerank": { kind: "reranker", source: "b", version: "1", dtype: "q8" } };
  assert.deepEqual(await readModelRegistry(await write(good)), good);
  await assert.rejects(
    async () =>
      readModelRegistry(await write({ "svc-minilm": minilm, r: { kind: "reranker", dimensions: 8, version: "1" } })),
    /r: a reranker needs a "source"/,
  );
  await assert.rejects(
    async () => readModelRegistry(await write({ "svc-minilm": { ...minilm, kind: "reranker" } })),
    /the default model "svc-minilm" must be an embedding model/,
  );
  await assert.rejects(
    async () =>
      readModelRegistry(await write({ "svc-minilm": minilm, r: { kind: "ranker", source: "b", version: "1" } })),
    /r.kind/,
  );
  assert.equal(BUILT_IN_MODELS["svc-rerank"]?.kind, "reranker");

  const embedder = new Embedder({ ...await testModels(), ...await testRerankers() }, {
    cacheDir: `${dir}/models`,
    allowRemote: false,
  });
  try {
    assert.deepEqual(embedder.modelIds(), ["svc-mediumlm", "svc-minilm"]);
    assert.equal(embedder.spec("svc-rerank"), undefined);
    assert.deepEqual(embedder.crossEncoders.modelIds(), ["svc-rerank"]);
    assert.equal(embedder.crossEncoders.spec("svc-minilm"), undefined);
    await assert.rejects(() => embedder.embed("svc-rerank", ["red"]), /Unknown model "svc-rerank"/);
  } finally {
    await embedder.dispose();
  }
});

Deno.test("rerankedPage reorders the first topN hits, keeps pinned ones in place, and pages the result", async () => {
  const embedder = new Embedder(await testRerankers(), {
    cacheDir: `${await temporaryDir("quire-rerank-page-")}/models`,
    allowRemote: false,
  });
  try {
    const texts = ["cat", "red", "red apple", "red apple banana", "banana", "dog"];
    const index = new SearchIndex({ revision: 1 });
    const doc = (text: string) => ({ text, passages: [{ start: 0, end: text.length, vector: Float32Array.of(1, 0) }] });
    index.apply(texts.map((text, i) => ({ id: `d${i}`, doc: doc(text), previousParts: 0 })));
    const hits = texts.map((_, i) => ({ id: `d${i}`, score: 1 - i / 10, ...(i === 1 ? { pinned: true } : {}) }));
    const rerank = checkedRerank(embedder, { modelId: "svc-rerank", topN: 5 })!;
    const input = { index, query: QUERY, terms: new Set<string>() };
    const all = await rerankedPage(rerank, hits, { ...input, page: { offset: 0, limit: 10 } });
    // d1 is pinned: it stays second and has no rerankScore; d0, d2, d3 and d4 are reordered; d5 lies past topN.
    assert.deepEqual(all.map((hit) => hit.id), ["d3", "d1", "d2", "d4", "d0", "d5"]);
    assert.equal(all[1]!.rerankScore, undefined);
    assert.equal(all[5]!.rerankScore, undefined);
    assert.ok(Math.abs(all[0]!.rerankScore! - 3) < 0.4);
    assert.equal(all[0]!.score, hits[3]!.score);
    const page = await rerankedPage(rerank, hits, { ...input, page: { offset: 2, limit: 3 } });
    assert.deepEqual(page, all.slice(2, 5));
    assert.throws(() => checkedRerank(embedder, { modelId: "nope" }), /Unknown reranker "nope"/);
  } finally {
    await embedder.dispose();
  }
});
