/**
 * Scores (query, text) pairs with cross-encoders, the registry's `"kind": "reranker"` models, on transformers.js: a
 * sequence-classification model that reads both texts at once and answers one relevance logit. Each model loads once,
 * at its first use. On the native backend it runs on worker threads, the batches of one call at once
 * (cross_encoder_workers.ts); on the wasm backend it runs here, one batch at a time. Either way the batches of
 * concurrent calls run in the order they came.
 */
import { loadOnce } from "../util/load_once.ts";
import { findAppFile } from "../util/app_files.ts";
import { HASH_MODEL_SOURCE, type ModelRegistry, type ModelSpec } from "./model_registry.ts";
import { CrossEncoderError, pairLogits, type PairTokens, pairTokens, pairWindow } from "./cross_encoder_pairs.ts";
import { CrossEncoderWorkers } from "./cross_encoder_workers.ts";
import {
  type EmbeddingBackend,
  loadTransformersRuntime,
  type RuntimeOptions,
  type TransformersRuntime,
} from "./transformers_runtime.ts";

/**
 * Pairs per model run at most. Short pairs (a query and a short hit) gain from larger batches up to about this many,
 * and longer ones lose little: their cost grows with the tokens, not the runs (docs/benchmarks.md, `bench:rerank`).
 */
const BATCH_SIZE = 25;

/**
 * Pairs per batch at least, where a call is split among workers. A smaller call runs as one batch: it is quick anyway,
 * and q8 scores depend a little on what shares a batch (its activations are quantized with one scale a run).
 */
const MIN_SPLIT = 4;

/**
 * Worker threads per cross-encoder at most, whatever the cores: each holds its own copy of the model, its tokenizer,
 * transformers.js and a JavaScript isolate, about 100 MB of RSS for a MiniLM-L6 at q8 (docs/benchmarks.md).
 */
const MAX_WORKERS = 2;

/** How cross-encoders are found and run: as the embedder's models are. */
export interface CrossEncoderOptions extends RuntimeOptions {
  /** `native` (onnxruntime-node on worker threads, the default) or `wasm` (onnxruntime-web here, no FFI). */
  backend?: EmbeddingBackend;
}

/** A loaded cross-encoder. */
interface LoadedCrossEncoder {
  tokens: PairTokens;
  /** How many batches it runs at once. */
  lanes: number;
  /** One logit per text, in the order of `texts`. */
  run(query: string, texts: string[]): Promise<Float32Array>;
  dispose(): Promise<void>;
}

/** Scores (query, text) pairs with the cross-encoders of a registry. */
export class CrossEncoders {
  readonly #registry: ModelRegistry;
  readonly #options: CrossEncoderOptions;
  /** transformers.js, imported at the first model load. */
  #runtime: Promise<TransformersRuntime> | undefined;
  readonly #models = new Map<string, Promise<LoadedCrossEncoder>>();

  /** The cross-encoders of `registry` (entries of other kinds are ignored), found and run as `options` say. */
  constructor(registry: ModelRegistry, options: CrossEncoderOptions) {
    this.#registry = Object.fromEntries(Object.entries(registry).filter(([, spec]) => spec.kind === "reranker"));
    this.#options = options;
  }

  /** The ids of the cross-encoders served, sorted. */
  modelIds(): string[] {
    return Object.keys(this.#registry).sort();
  }

  /** The spec of a cross-encoder, or undefined when the registry has no such reranker. */
  spec(modelId: string): ModelSpec | undefined {
    return Object.hasOwn(this.#registry, modelId) ? this.#registry[modelId] : undefined;
  }

  /** How a cross-encoder counts tokens; loads it first. */
  async tokens(modelId: string): Promise<PairTokens> {
    return (await this.#load(modelId)).tokens;
  }

  /**
   * The model's relevance logit of `query` with each of `texts` (higher is more relevant), in the order of `texts`. A
   * pair longer than the model's window is cut at the end of its text; the query is not cut, so it must fit.
   */
  async score(modelId: string, query: string, texts: string[]): Promise<Float32Array> {
    const scores = new Float32Array(texts.length);
    if (texts.length === 0) return scores;
    const model = await this.#load(modelId);
    // Texts of like length share a batch, to cut padding; a call has a batch for each lane while they are not too small.
    const order = texts.map((_, i) => i).sort((a, b) => texts[a]!.length - texts[b]!.length);
    const size = Math.min(BATCH_SIZE, Math.max(MIN_SPLIT, Math.ceil(texts.length / model.lanes)));
    const count = Math.ceil(texts.length / size);
    const batches = Array.from(
      { length: count },
      (_, b) => order.slice(evenCut(texts.length, count, b), evenCut(texts.length, count, b + 1)),
    );
    await Promise.all(batches.map(async (batch) => {
      const logits = await model.run(query, batch.map((i) => texts[i]!));
      batch.forEach((i, row) => scores[i] = logits[row]!);
    }));
    return scores;
  }

  #load(modelId: string): Promise<LoadedCrossEncoder> {
    return loadOnce(this.#models, modelId, () => this.#open(modelId));
  }

  async #open(modelId: string): Promise<LoadedCrossEncoder> {
    const spec = this.spec(modelId);
    if (spec === undefined) throw new CrossEncoderError(`Unknown reranker "${modelId}"`);
    const source = spec.source!;
    if (source === HASH_MODEL_SOURCE) {
      throw new CrossEncoderError(`Reranker "${modelId}" names the hash embedding, which is not a cross-encoder`);
    }
    const directory = await findAppFile(source, "directory");
    const local = directory !== undefined;
    const dtype = spec.dtype ?? "fp32";
    try {
      this.#runtime ??= loadTransformersRuntime(this.#options.backend ?? "native", this.#options);
      const runtime = await this.#runtime;
      if (this.#options.backend === "wasm") return await inThread(runtime, directory ?? source, { local, dtype });
      const { cacheDir, allowRemote } = this.#options;
      const load = { source: directory ?? source, local, dtype, cacheDir, allowRemote };
      // A worker a core that a model run may use (`threads`, or every core).
      const workerCount = Math.min(MAX_WORKERS, this.#options.threads ?? navigator.hardwareConcurrency);
      // A worker that died has failed its calls; the next call loads the model afresh.
      const onStop = () => this.#models.delete(modelId);
      const opening = CrossEncoderWorkers.open(modelId, load, { workers: workerCount, onStop });
      opening.catch(() => {}); // Awaited once the tokenizer has loaded.
      // The tokenizer here counts the tokens of queries, while the workers load the model.
      const tokenizer = await runtime.openTokenizer(load.source, { local }).catch(async (error) => {
        await opening.then(({ workers }) => workers.dispose(), () => {});
        throw error;
      });
      const { workers, window } = await opening;
      return {
        tokens: pairTokens(tokenizer, window),
        lanes: workerCount,
        run: (query, texts) => workers.run(query, texts),
        dispose: () => workers.dispose(),
      };
    } catch (error) {
      throw new CrossEncoderError(`Cannot load reranker "${modelId}" from "${source}"`, { cause: error });
    }
  }

  /** Releases every loaded cross-encoder. */
  async dispose(): Promise<void> {
    const loaded = [...this.#models.values()];
    this.#models.clear();
    for (const loading of loaded) {
      // A model that failed to load holds nothing to release, and one that fails to release must not keep the others.
      await loading.then((model) => model.dispose()).catch(() => {});
    }
  }
}

/** The start of batch `b` of `count` that cut `length` items as evenly as can be. */
function evenCut(length: number, count: number, b: number): number {
  return Math.floor(length * b / count);
}

/** A cross-encoder run on this thread, one batch at a time (the wasm backend, which runs no workers). */
async function inThread(
  runtime: TransformersRuntime,
  source: string,
  options: { local: boolean; dtype: NonNullable<ModelSpec["dtype"]> },
): Promise<LoadedCrossEncoder> {
  const classifier = await runtime.openClassifier(source, options);
  const window = pairWindow(classifier);
  /** The last batch, run or waiting: the next runs after it. */
  let turn: Promise<unknown> = Promise.resolve();
  return {
    tokens: pairTokens(classifier.tokenizer, window),
    lanes: 1,
    run: (query, texts) => {
      const logits = turn.then(() => pairLogits(classifier, window, query, texts));
      turn = logits.catch(() => {});
      return logits;
    },
    dispose: async () => void await classifier.model.dispose(),
  };
}
