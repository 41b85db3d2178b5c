/**
 * Scores (query, text) pairs with cross-encoders, the registry's `"kind": "reranker"` models, on transformers.js: a
 * sequence-classification model that reads both texts at once and answers one relevance logit. Each model loads once,
 * at its first use, and runs one batch at a time; the batches of concurrent requests take turns.
 */
import { loadOnce } from "../util/load_once.ts";
import { findAppFile } from "../util/app_files.ts";
import { HASH_MODEL_SOURCE, type ModelRegistry, type ModelSpec } from "./model_registry.ts";
import {
  type EmbeddingBackend,
  loadTransformersRuntime,
  type RuntimeOptions,
  type TextClassifier,
  type TransformersRuntime,
} from "./transformers_runtime.ts";

/**
 * Pairs per model run. Short pairs (a query and a short hit) gain from larger batches up to about this many, and longer
 * ones lose little: their cost grows with the tokens, not the runs (docs/benchmarks.md, `bench:rerank`).
 */
const BATCH_SIZE = 25;

/** How cross-encoders are found and run: as the embedder's models are. */
export interface CrossEncoderOptions extends RuntimeOptions {
  /** `native` (onnxruntime-node, the default) or `wasm` (onnxruntime-web, no FFI). */
  backend?: EmbeddingBackend;
}

/** An error of loading or running a cross-encoder. */
export class CrossEncoderError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CrossEncoderError";
  }
}

/** How a cross-encoder counts tokens. */
export interface PairTokens {
  /** The most tokens the model reads in one (query, text) pair, special tokens included. */
  window: number;
  /** The tokens of one text, special tokens not included. */
  count(text: string): number;
}

/** A loaded cross-encoder. */
interface LoadedCrossEncoder {
  tokens: PairTokens;
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
  /** Each model's last batch, run or waiting: the next batch runs after it. */
  readonly #turns = new Map<string, Promise<unknown>>();

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
    // Texts of like length share a batch, to cut padding.
    const order = texts.map((_, i) => i).sort((a, b) => texts[a]!.length - texts[b]!.length);
    const batches: number[][] = [];
    for (let start = 0; start < order.length; start += BATCH_SIZE) batches.push(order.slice(start, start + BATCH_SIZE));
    await Promise.all(batches.map(async (batch) => {
      const logits = await this.#inTurn(modelId, () => model.run(query, batch.map((i) => texts[i]!)));
      batch.forEach((i, row) => scores[i] = logits[row]!);
    }));
    return scores;
  }

  /** Runs `run` once the model's earlier batches are done, so that concurrent requests' batches alternate. */
  #inTurn<T>(modelId: string, run: () => Promise<T>): Promise<T> {
    const previous = this.#turns.get(modelId) ?? Promise.resolve();
    const next = previous.then(run);
    const settled = next.catch(() => {});
    this.#turns.set(modelId, settled);
    // The chain is dropped once it is idle, so that an idle model holds no promise.
    settled.then(() => this.#turns.get(modelId) === settled && this.#turns.delete(modelId));
    return next;
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
    try {
      this.#runtime ??= loadTransformersRuntime(this.#options.backend ?? "native", this.#options);
      const runtime = await this.#runtime;
      const classifier = await runtime.openClassifier(directory ?? source, {
        local: directory !== undefined,
        dtype: spec.dtype ?? "fp32",
      });
      const tokens = pairTokensOf(classifier);
      return {
        tokens,
        run: (query, texts) => pairLogits(classifier, tokens.window, query, texts),
        dispose: async () => void await classifier.model.dispose(),
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

/** A cross-encoder's window: the least of what its tokenizer and its position embeddings allow (512 when neither says). */
function pairTokensOf({ tokenizer, model }: TextClassifier): PairTokens {
  const positions = (model.config as { max_position_embeddings?: number }).max_position_embeddings;
  const window = Math.min(Number(tokenizer.model_max_length) || Infinity, positions ?? Infinity);
  return {
    window: Number.isFinite(window) ? window : 512,
    count: (text) => tokenizer.encode(text, { add_special_tokens: false }).length,
  };
}

/** The token ids of one pair, as the tokenizer's template joins them. */
interface PairEncoding {
  input_ids: number[];
  attention_mask: number[];
  token_type_ids?: number[];
}

/** Runs the model on (query, text) pairs, each cut to the window and padded to the batch's longest, and reads its logits. */
async function pairLogits(
  classifier: TextClassifier,
  window: number,
  query: string,
  texts: string[],
): Promise<Float32Array> {
  const { tokenizer, model, int64Tensor } = classifier;
  const pairs = texts.map((text) =>
    fitted(
      tokenizer(query, { text_pair: text, return_tensor: false, return_token_type_ids: true }) as PairEncoding,
      window,
    )
  );
  const rows = pairs.length;
  const length = Math.max(...pairs.map((pair) => pair.input_ids.length));
  const ids = new BigInt64Array(rows * length).fill(BigInt(tokenizer.pad_token_id ?? 0));
  const mask = new BigInt64Array(rows * length);
  const types = new BigInt64Array(rows * length);
  pairs.forEach((pair, row) => {
    pair.input_ids.forEach((id, i) => {
      ids[row * length + i] = BigInt(id);
      mask[row * length + i] = BigInt(pair.attention_mask[i]!);
      types[row * length + i] = BigInt(pair.token_type_ids?.[i] ?? 0);
    });
  });
  const dims = [rows, length];
  const { logits } = await model({
    input_ids: int64Tensor(ids, dims),
    attention_mask: int64Tensor(mask, dims),
    token_type_ids: int64Tensor(types, dims),
  });
  const [outRows, labels] = logits.dims as number[];
  if (outRows !== rows || labels !== 1) {
    throw new CrossEncoderError(`A cross-encoder must answer one logit per pair, not logits of shape [${logits.dims}]`);
  }
  return Float32Array.from(logits.data as Float32Array);
}

/**
 * A pair cut to `window` tokens: the text's last tokens go, and the template's closing token (e.g. `[SEP]`) stays.
 * The query comes first in the pair, so it is never cut where it fits.
 */
function fitted(pair: PairEncoding, window: number): PairEncoding {
  if (pair.input_ids.length <= window) return pair;
  const cut = (values: number[]) => [...values.slice(0, window - 1), values.at(-1)!];
  return {
    input_ids: cut(pair.input_ids),
    attention_mask: cut(pair.attention_mask),
    ...(pair.token_type_ids === undefined ? {} : { token_type_ids: cut(pair.token_type_ids) }),
  };
}
