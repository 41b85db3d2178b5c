/**
 * Turns texts into mean-pooled, L2-normalised vectors with transformers.js, on onnxruntime-node or onnxruntime-web.
 * Each model is loaded once, on first use, and runs one batch at a time. Concurrent requests share batches: the texts
 * of small requests (search queries) go first, then those of large ones, whose texts are sorted by length to cut
 * padding.
 */
import { loadOnce } from "../util/load_once.ts";
import type { FeatureExtractionPipeline } from "@huggingface/transformers";
import { findAppFile } from "../util/app_files.ts";
import { hashEmbedding } from "./hash_embedding.ts";
import {
  HASH_MODEL_SOURCE,
  isExternalModel,
  type ModelRegistry,
  modelsOfKind,
  type ModelSpec,
} from "./model_registry.ts";
import { CrossEncoders } from "./cross_encoder.ts";
import {
  type EmbeddingBackend,
  loadTransformersRuntime,
  type RuntimeOptions,
  type TransformersRuntime,
} from "./transformers_runtime.ts";

/**
 * Texts per model run. Larger batches gain nothing once a batch keeps every core busy, as a few passage-length texts
 * do, and past that their activations spill out of the CPU cache, so that each text runs slower.
 */
const BATCH_SIZE = 8;

/** Requests of at most this many texts jump ahead of larger ones. */
const INTERACTIVE_TEXTS = 4;

/** How the embedder finds and runs models. */
export interface EmbedderOptions extends RuntimeOptions {
  /** `native` (onnxruntime-node, the default) or `wasm` (onnxruntime-web, no FFI). */
  backend?: EmbeddingBackend;
}

/** An error of loading or running a model. */
export class EmbeddingError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "EmbeddingError";
  }
}

/** One `embed` call waiting for its vectors. */
interface EmbedRequest {
  texts: string[];
  /** Text positions in the order they are to be embedded. */
  order: number[];
  /** How many of `order` have been taken into batches. */
  taken: number;
  vectors: Float32Array[];
  missing: number;
  failed: boolean;
  done: PromiseWithResolvers<Float32Array[]>;
}

/** How a model counts tokens: what passages are measured in. */
export interface ModelTokens {
  /** The most tokens the model reads in one text, special tokens included. */
  window: number;
  /** The special tokens the model adds to every text (e.g. `[CLS]` and `[SEP]`). */
  specialTokens: number;
  /** The tokens of each text, special tokens not included. */
  count(texts: string[]): number[];
}

/** A loaded model: it turns a batch of texts into one row of vector values per text. */
interface LoadedModel {
  tokens: ModelTokens;
  run(texts: string[]): Promise<{ dims: [number, number]; data: Float32Array }>;
  dispose(): Promise<void>;
}

/** The requests waiting for one model. */
interface ModelQueue {
  interactive: EmbedRequest[];
  bulk: EmbedRequest[];
  running: boolean;
}

/** What one model has done since the embedder was made. */
export interface ModelUsage {
  /** Texts embedded (documents and queries alike). */
  texts: number;
  /** Time spent in model runs, failed ones included. */
  seconds: number;
}

/** Embeds texts with the models of a registry. */
export class Embedder {
  /** The registry's rerankers (`"kind": "reranker"`), which embed nothing and so are not among the models here. */
  readonly crossEncoders: CrossEncoders;
  readonly #registry: ModelRegistry;
  readonly #options: EmbedderOptions;
  /** transformers.js, imported at the first model load: the native build cannot even be imported without FFI. */
  #runtime: Promise<TransformersRuntime> | undefined;
  readonly #models = new Map<string, Promise<LoadedModel>>();
  readonly #queues = new Map<string, ModelQueue>();
  readonly #usage = new Map<string, ModelUsage>();
  readonly #dimensions = new Map<string, number>();

  constructor(registry: ModelRegistry, options: EmbedderOptions) {
    this.#registry = modelsOfKind(registry, "embedding");
    this.#options = options;
    this.crossEncoders = new CrossEncoders(registry, options);
  }

  /** The ids of the models this embedder serves, sorted. */
  modelIds(): string[] {
    return Object.keys(this.#registry).sort();
  }

  /** The spec of a model, or undefined when the registry has no such model. */
  spec(modelId: string): ModelSpec | undefined {
    return Object.hasOwn(this.#registry, modelId) ? this.#registry[modelId] : undefined;
  }

  /** Texts embedded and time spent per model id, for the models that have run. */
  usage(): ReadonlyMap<string, Readonly<ModelUsage>> {
    return this.#usage;
  }

  /** Loads a model if it is not loaded yet; rejects when it cannot load. */
  async load(modelId: string): Promise<void> {
    await this.#load(modelId);
  }

  /** How a model counts tokens; loads it first. Rejects for an external model, which quire does not run. */
  async tokens(modelId: string): Promise<ModelTokens> {
    return (await this.#load(modelId)).tokens;
  }

  /**
   * The length of a model's vectors: an external model's from its spec, another's by embedding once, which rejects
   * when the spec names other `dimensions` than the model makes.
   */
  async dimensions(modelId: string): Promise<number> {
    const spec = this.spec(modelId);
    if (spec !== undefined && isExternalModel(spec)) return spec.dimensions!;
    let dims = this.#dimensions.get(modelId);
    if (dims === undefined) {
      dims = (await this.embed(modelId, [""]))[0]!.length;
      if (spec?.dimensions !== undefined && spec.dimensions !== dims) {
        throw new EmbeddingError(`Model "${modelId}" makes vectors of ${dims} dimensions, not ${spec.dimensions}`);
      }
      this.#dimensions.set(modelId, dims);
    }
    return dims;
  }

  /** Embeds `texts` with a model; the vectors come back in the order of the texts. */
  embed(modelId: string, texts: string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return Promise.resolve([]);
    const order = texts.map((_, i) => i).sort((a, b) => texts[a]!.length - texts[b]!.length);
    const request: EmbedRequest = {
      texts,
      order,
      taken: 0,
      vectors: new Array(texts.length),
      missing: texts.length,
      failed: false,
      done: Promise.withResolvers(),
    };
    let queue = this.#queues.get(modelId);
    if (queue === undefined) this.#queues.set(modelId, queue = { interactive: [], bulk: [], running: false });
    (texts.length <= INTERACTIVE_TEXTS ? queue.interactive : queue.bulk).push(request);
    if (!queue.running) this.#drain(modelId, queue);
    return request.done.promise;
  }

  /** Runs batches until no request waits. */
  async #drain(modelId: string, queue: ModelQueue): Promise<void> {
    queue.running = true;
    try {
      while (queue.interactive.length + queue.bulk.length > 0) {
        let model: LoadedModel;
        try {
          model = await this.#load(modelId);
        } catch (error) {
          for (const request of [...queue.interactive.splice(0), ...queue.bulk.splice(0)]) fail(request, error);
          continue;
        }
        await this.#runBatch(modelId, model, takeBatch(queue));
      }
    } finally {
      queue.running = false;
    }
  }

  async #runBatch(
    modelId: string,
    model: LoadedModel,
    batch: [EmbedRequest, number][],
  ): Promise<void> {
    let usage = this.#usage.get(modelId);
    if (usage === undefined) this.#usage.set(modelId, usage = { texts: 0, seconds: 0 });
    const started = performance.now();
    let output;
    try {
      output = await model.run(batch.map(([request, i]) => request.texts[i]!));
    } catch (error) {
      for (const [request] of batch) {
        fail(request, new EmbeddingError(`Model "${modelId}" failed to embed`, { cause: error }));
      }
      return;
    } finally {
      usage.seconds += (performance.now() - started) / 1000;
    }
    const [rows, dims] = output.dims;
    if (rows !== batch.length || !(dims > 0)) {
      const error = new EmbeddingError(`Model "${modelId}" returned vectors of shape [${output.dims}]`);
      for (const [request] of batch) fail(request, error);
      return;
    }
    usage.texts += rows;
    const data = output.data;
    batch.forEach(([request, i], row) => {
      if (request.failed) return;
      request.vectors[i] = data.slice(row * dims, (row + 1) * dims);
      if (--request.missing === 0) request.done.resolve(request.vectors);
    });
  }

  #load(modelId: string): Promise<LoadedModel> {
    return loadOnce(this.#models, modelId, () => this.#open(modelId));
  }

  async #open(modelId: string): Promise<LoadedModel> {
    const spec = this.spec(modelId);
    if (spec === undefined) throw new EmbeddingError(`Unknown model "${modelId}"`);
    const source = spec.source;
    if (source === undefined) throw new EmbeddingError(`Model "${modelId}" is external: clients send its vectors`);
    if (source === HASH_MODEL_SOURCE) return hashModel();
    const directory = await findAppFile(source, "directory");
    try {
      this.#runtime ??= loadTransformersRuntime(this.#options.backend ?? "native", this.#options);
      const runtime = await this.#runtime;
      const local = directory !== undefined;
      const extractor = await runtime.open(directory ?? source, { local, dtype: spec.dtype ?? "fp32" });
      const tokens = tokensOf(extractor);
      return {
        tokens,
        run: (texts) => meanPooledVectors(extractor, texts, tokens.window),
        dispose: () => extractor.dispose(),
      };
    } catch (error) {
      throw new EmbeddingError(`Cannot load model "${modelId}" from "${source}"`, { cause: error });
    }
  }

  /** Releases every loaded model. */
  async dispose(): Promise<void> {
    await this.crossEncoders.dispose();
    const loaded = [...this.#models.values()];
    this.#models.clear();
    for (const loading of loaded) {
      // A model that failed to load holds nothing to release, and one that fails to release must not keep the others.
      await loading.then((model) => model.dispose()).catch(() => {});
    }
  }
}

/**
 * The most words the hash embedding reads as one passage. It has no window of its own (it reads any length), so this
 * only bounds the passages that its indexes are split into.
 */
const HASH_MODEL_WINDOW = 512;

/** The built-in hash embedding as a model: no files, no runtime; its tokens are words. */
function hashModel(): LoadedModel {
  return {
    tokens: {
      window: HASH_MODEL_WINDOW,
      specialTokens: 0,
      count: (texts) => texts.map((text) => text.match(/\S+/g)?.length ?? 0),
    },
    run(texts) {
      const vectors = texts.map((text) => hashEmbedding(text));
      const dims = vectors[0]?.length ?? 0;
      const data = new Float32Array(texts.length * dims);
      vectors.forEach((vector, row) => data.set(vector, row * dims));
      return Promise.resolve({ dims: [texts.length, dims], data });
    },
    dispose: () => Promise.resolve(),
  };
}

/** Takes the next batch: texts of small requests first, then of large ones, sorted by length. */
function takeBatch(queue: ModelQueue): [EmbedRequest, number][] {
  const batch: [EmbedRequest, number][] = [];
  for (const requests of [queue.interactive, queue.bulk]) {
    while (batch.length < BATCH_SIZE && requests.length > 0) {
      const request = requests[0]!;
      while (!request.failed && batch.length < BATCH_SIZE && request.taken < request.order.length) {
        batch.push([request, request.order[request.taken++]!]);
      }
      if (request.taken === request.order.length || request.failed) requests.shift();
    }
  }
  return batch.sort(([a, i], [b, j]) => a.texts[i]!.length - b.texts[j]!.length);
}

function fail(request: EmbedRequest, error: unknown): void {
  if (request.failed) return;
  request.failed = true;
  request.done.reject(error);
}

/**
 * How a transformers.js model counts tokens. Its window is the least of what the tokenizer and the position
 * embeddings allow (a tokenizer without a limit reports a huge one).
 */
function tokensOf(extractor: FeatureExtractionPipeline): ModelTokens {
  const tokenizer = extractor.tokenizer;
  const positions = (extractor.model.config as { max_position_embeddings?: number }).max_position_embeddings;
  const window = Math.min(Number(tokenizer.model_max_length) || Infinity, positions ?? Infinity);
  return {
    window: Number.isFinite(window) ? window : 512,
    specialTokens: tokenizer.encode("", { add_special_tokens: true }).length,
    count: (texts) => texts.map((text) => tokenizer.encode(text, { add_special_tokens: false }).length),
  };
}

/**
 * Runs the model on a batch and mean-pools and L2-normalises its token states, as the pipeline's
 * `{pooling: "mean", normalize: true}` does, but in one pass over the states: transformers.js pools with a BigInt
 * conversion per element, which is slow enough to show in every model run.
 */
async function meanPooledVectors(
  extractor: FeatureExtractionPipeline,
  texts: string[],
  window: number,
): Promise<{ dims: [number, number]; data: Float32Array }> {
  // Never truncated: passages are cut to fit the window, and a longer query is refused before it gets here.
  const inputs = extractor.tokenizer(texts, { padding: true, truncation: false });
  const length = (inputs.input_ids.dims as number[])[1]!;
  if (length > window) throw new Error(`A text of ${length} tokens is longer than the model's window of ${window}`);
  const { last_hidden_state: hidden } = await extractor.model(inputs);
  const [rows, tokens, dims] = hidden.dims as [number, number, number];
  const states = hidden.data as Float32Array;
  const mask = inputs.attention_mask.data as BigInt64Array;
  const data = new Float32Array(rows * dims);
  for (let row = 0; row < rows; row++) {
    const sum = data.subarray(row * dims, (row + 1) * dims);
    let count = 0;
    for (let token = 0; token < tokens; token++) {
      if (mask[row * tokens + token] === 0n) continue;
      count++;
      const offset = (row * tokens + token) * dims;
      for (let d = 0; d < dims; d++) sum[d]! += states[offset + d]!;
    }
    let norm = 0;
    for (let d = 0; d < dims; d++) norm += (sum[d]! /= Math.max(count, 1)) ** 2;
    norm = Math.max(Math.sqrt(norm), 1e-12);
    for (let d = 0; d < dims; d++) sum[d]! /= norm;
  }
  return { dims: [rows, dims], data };
}
