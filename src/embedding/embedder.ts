/**
 * Turns texts into mean-pooled, L2-normalised vectors with transformers.js (onnxruntime). Each model is loaded once,
 * on first use, and its runs are serialised; texts are sorted by length and batched to cut padding.
 */
import { env, type FeatureExtractionPipeline, pipeline } from "@huggingface/transformers";
import { resolve } from "node:path";
import type { ModelRegistry, ModelSpec } from "./model_registry.ts";

/** Texts per model run. */
const BATCH_SIZE = 32;

/** How the embedder finds models. */
export interface EmbedderOptions {
  /** Where hub models are downloaded. */
  cacheDir: string;
  /** Whether models missing on disk may be downloaded from the hub. */
  allowRemote: boolean;
}

/** An error of loading or running a model. */
export class EmbeddingError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "EmbeddingError";
  }
}

/** Embeds texts with the models of a registry. */
export class Embedder {
  readonly #registry: ModelRegistry;
  readonly #pipelines = new Map<string, Promise<FeatureExtractionPipeline>>();
  readonly #queues = new Map<string, Promise<unknown>>();

  constructor(registry: ModelRegistry, options: EmbedderOptions) {
    this.#registry = registry;
    env.cacheDir = options.cacheDir;
    env.allowRemoteModels = options.allowRemote;
    env.allowLocalModels = true;
  }

  /** The ids of the models this embedder serves, sorted. */
  modelIds(): string[] {
    return Object.keys(this.#registry).sort();
  }

  /** The spec of a model, or undefined when the registry has no such model. */
  spec(modelId: string): ModelSpec | undefined {
    return Object.hasOwn(this.#registry, modelId) ? this.#registry[modelId] : undefined;
  }

  /** Embeds `texts` with a model; the vectors come back in the order of the texts. */
  embed(modelId: string, texts: string[]): Promise<Float32Array[]> {
    const previous = this.#queues.get(modelId) ?? Promise.resolve();
    const run = previous.catch(() => {}).then(() => this.#embedNow(modelId, texts));
    this.#queues.set(modelId, run);
    return run;
  }

  async #embedNow(modelId: string, texts: string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const extractor = await this.#load(modelId);
    const order = texts.map((_, i) => i).sort((a, b) => texts[a]!.length - texts[b]!.length);
    const vectors = new Array<Float32Array>(texts.length);
    for (let start = 0; start < order.length; start += BATCH_SIZE) {
      const batch = order.slice(start, start + BATCH_SIZE);
      let output;
      try {
        output = await extractor(batch.map((i) => texts[i]!), { pooling: "mean", normalize: true });
      } catch (error) {
        throw new EmbeddingError(`Model "${modelId}" failed to embed`, { cause: error });
      }
      const [rows, dims] = output.dims as [number, number];
      if (rows !== batch.length || !(dims > 0)) {
        throw new EmbeddingError(`Model "${modelId}" returned vectors of shape [${output.dims}]`);
      }
      const data = output.data as Float32Array;
      batch.forEach((textIndex, row) => vectors[textIndex] = data.slice(row * dims, (row + 1) * dims));
    }
    return vectors;
  }

  #load(modelId: string): Promise<FeatureExtractionPipeline> {
    let loading = this.#pipelines.get(modelId);
    if (loading === undefined) {
      loading = this.#open(modelId);
      this.#pipelines.set(modelId, loading);
      // A failed load is forgotten, so that the next request tries again.
      loading.catch(() => this.#pipelines.delete(modelId));
    }
    return loading;
  }

  async #open(modelId: string): Promise<FeatureExtractionPipeline> {
    const spec = this.spec(modelId);
    if (spec === undefined) throw new EmbeddingError(`Unknown model "${modelId}"`);
    const source = await isDirectory(spec.source) ? resolve(spec.source) : spec.source;
    try {
      return await pipeline("feature-extraction", source, { dtype: spec.dtype ?? "fp32" });
    } catch (error) {
      throw new EmbeddingError(`Cannot load model "${modelId}" from "${spec.source}"`, { cause: error });
    }
  }

  /** Releases every loaded model. */
  async dispose(): Promise<void> {
    const loaded = [...this.#pipelines.values()];
    this.#pipelines.clear();
    for (const loading of loaded) {
      await loading.then((extractor) => extractor.dispose()).catch(() => {});
    }
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch {
    return false;
  }
}
