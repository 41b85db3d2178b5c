/** The wasm backend (onnxruntime-web through transformers.js' web build) against the native one, on generated models. */
import assert from "node:assert/strict";
import { Embedder } from "../../src/embedding/embedder.ts";
import type { ModelRegistry } from "../../src/embedding/model_registry.ts";
import { testModels } from "../_helpers.ts";

const TEXTS = [
  "the cat runs",
  "a much longer text about the river and the forest in the morning, with words the vocabulary lacks: zyxwv",
  "",
  "dog",
  "search index document text vector model embed query data project key service store database",
];

function embedders(registry: ModelRegistry): AsyncDisposable & { native: Embedder; wasm: Embedder } {
  const cacheDir = "/nonexistent/cache";
  const native = new Embedder(registry, { cacheDir, allowRemote: false, backend: "native" });
  const wasm = new Embedder(registry, { cacheDir, allowRemote: false, backend: "wasm" });
  return {
    native,
    wasm,
    async [Symbol.asyncDispose]() {
      await native.dispose();
      await wasm.dispose();
    },
  };
}

function cosine(a: Float32Array, b: Float32Array): number {
  return a.reduce((sum, value, i) => sum + value * b[i]!, 0);
}

Deno.test("the wasm backend embeds the same vectors as the native one, within 1e-4 cosine", async () => {
  const registry = await testModels();
  await using both = embedders(registry);
  for (const modelId of Object.keys(registry)) {
    const native = await both.native.embed(modelId, TEXTS);
    const wasm = await both.wasm.embed(modelId, TEXTS);
    native.forEach((vector, i) => {
      assert.equal(wasm[i]!.length, vector.length);
      const similarity = cosine(vector, wasm[i]!);
      assert.ok(similarity > 1 - 1e-4, `${modelId}, text ${i}: cosine ${similarity}`);
    });
  }
});
