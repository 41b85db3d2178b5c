/** The embedder on generated models: real onnxruntime inference through transformers.js. */
import assert from "node:assert/strict";
import { pipeline } from "@huggingface/transformers";
import { Embedder } from "../../src/embedding/embedder.ts";
import { DEFAULT_MODEL_ID, readModelRegistry } from "../../src/embedding/model_registry.ts";
import { temporaryDir, testModels } from "../_helpers.ts";

function cosine(a: Float32Array, b: Float32Array): number {
  return a.reduce((sum, value, i) => sum + value * b[i]!, 0);
}

Deno.test("vectors are L2-normalised, deterministic, in input order, and independent of batching", async () => {
  using embedder = new DisposableEmbedder(await testModels());
  const texts = ["the cat runs", "a much longer text about the river and the forest in the morning", "dog"];
  const batch = await embedder.embed(DEFAULT_MODEL_ID, texts);
  assert.equal(batch.length, 3);
  for (const [i, vector] of batch.entries()) {
    assert.equal(vector.length, 32);
    assert.ok(Math.abs(Math.hypot(...vector) - 1) < 1e-5);
    const [alone] = await embedder.embed(DEFAULT_MODEL_ID, [texts[i]!]);
    assert.ok(cosine(vector, alone!) > 0.9999, `text ${i} embeds the same alone and in a batch`);
  }
  assert.ok(cosine(batch[0]!, batch[1]!) < 0.999, "different texts get different vectors");
  const [medium] = await embedder.embed("svc-mediumlm", ["dog"]);
  assert.equal(medium!.length, 48);
});

Deno.test("vectors equal the pipeline's own mean pooling and normalisation", async () => {
  const models = await testModels();
  using embedder = new DisposableEmbedder(models);
  const extractor = await pipeline("feature-extraction", models[DEFAULT_MODEL_ID]!.source, { dtype: "fp32" });
  try {
    const texts = ["short", "a somewhat longer text that needs padding in a batch", ""];
    const ours = await embedder.embed(DEFAULT_MODEL_ID, texts);
    const theirs = await extractor(texts, { pooling: "mean", normalize: true });
    const dims = theirs.dims[1] as number;
    ours.forEach((vector, row) => {
      vector.forEach((value, d) => {
        assert.ok(Math.abs(value - (theirs.data as Float32Array)[row * dims + d]!) < 1e-5, `text ${row}, dim ${d}`);
      });
    });
  } finally {
    await extractor.dispose();
  }
});

Deno.test("concurrent requests share batches, and each gets its own vectors in its own order", async () => {
  using embedder = new DisposableEmbedder(await testModels());
  const texts = Array.from({ length: 40 }, (_, i) => `text number ${i} ${"word ".repeat(i % 7)}`);
  const alone: Float32Array[] = [];
  for (const text of texts) alone.push((await embedder.embed(DEFAULT_MODEL_ID, [text]))[0]!);
  const bulk = embedder.embed(DEFAULT_MODEL_ID, texts.slice(0, 30).reverse());
  const queries = texts.slice(30).map((text) => embedder.embed(DEFAULT_MODEL_ID, [text]));
  const [bulkVectors, ...queryVectors] = await Promise.all([bulk, ...queries]);
  bulkVectors!.forEach((vector, i) => assert.ok(cosine(vector, alone[29 - i]!) > 0.9999, `bulk text ${i}`));
  queryVectors.forEach(([vector], i) => assert.ok(cosine(vector!, alone[30 + i]!) > 0.9999, `query ${i}`));
});

Deno.test("a model that cannot load fails with an error, and the next call tries again", async () => {
  const registry = { [DEFAULT_MODEL_ID]: { source: "/nonexistent/model/dir", version: "1" } };
  using embedder = new DisposableEmbedder(registry);
  await assert.rejects(() => embedder.embed(DEFAULT_MODEL_ID, ["x"]), /Cannot load model "svc-minilm"/);
  const both = [embedder.embed(DEFAULT_MODEL_ID, ["x"]), embedder.embed(DEFAULT_MODEL_ID, ["y", "z"])];
  for (const attempt of both) await assert.rejects(() => attempt, /Cannot load model/, "every waiting request fails");
  assert.deepEqual(await embedder.embed(DEFAULT_MODEL_ID, []), []);
});

Deno.test("MODELS_FILE must have the documented shape and define the default model", async () => {
  const dir = await temporaryDir("quire-embedder-");
  const write = async (json: unknown) => {
    await Deno.writeTextFile(`${dir}/models.json`, JSON.stringify(json));
    return `${dir}/models.json`;
  };
  const good = { "svc-minilm": { source: "./m", version: "1", dtype: "q8" }, "x": { source: "org/x", version: "2" } };
  assert.deepEqual(await readModelRegistry(await write(good)), good);
  await assert.rejects(async () => readModelRegistry(await write({ x: { source: "a", version: "1" } })), /svc-minilm/);
  await assert.rejects(async () => readModelRegistry(await write({ "svc-minilm": { source: "a" } })), /version/);
  await assert.rejects(
    async () => readModelRegistry(await write({ "svc-minilm": { source: "a", version: "1", dtype: "f64" } })),
    /dtype/,
  );
  await assert.rejects(() => readModelRegistry(`${dir}/missing.json`), /Cannot read MODELS_FILE/);
});

/** An embedder released at the end of its scope. */
class DisposableEmbedder extends Embedder {
  constructor(registry: ConstructorParameters<typeof Embedder>[0]) {
    super(registry, { cacheDir: "unused", allowRemote: false });
  }
  [Symbol.dispose](): void {
    this.dispose();
  }
}
