/**
 * Loads transformers.js for an embedding backend. `native` is the package's Node build on onnxruntime-node, a native
 * addon. `wasm` is its web build on onnxruntime-web: it loads no native code, so it runs without FFI (as on Deno
 * Deploy); it reads the WebAssembly binary from node_modules and model files from disk or the hub, and writes nothing.
 */
import type {
  FeatureExtractionPipeline,
  PreTrainedModel,
  PreTrainedTokenizer,
  Tensor,
} from "@huggingface/transformers";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { ModelSpec } from "./model_registry.ts";

/** The ways a model can run. */
export const EMBEDDING_BACKENDS = ["native", "wasm"] as const;

/** One way a model can run. */
export type EmbeddingBackend = typeof EMBEDDING_BACKENDS[number];

/** Where models come from. */
export interface RuntimeOptions {
  /** Where hub models are cached: written by `native`, only read by `wasm`. */
  cacheDir: string;
  /** Whether models missing on disk may be downloaded from the hub. */
  allowRemote: boolean;
  /** Threads one model run may use (`native` only); onnxruntime's default, one per core, when absent. */
  threads?: number | undefined;
}

/** Opens feature-extraction pipelines and cross-encoders on one backend. */
export interface TransformersRuntime {
  /** A pipeline over a model directory (`local`, an absolute path) or a hub repo id. */
  open(source: string, options: { local: boolean; dtype: NonNullable<ModelSpec["dtype"]> }): Promise<
    FeatureExtractionPipeline
  >;
  /** A sequence-classification model and its tokenizer, from a model directory (`local`) or a hub repo id. */
  openClassifier(source: string, options: { local: boolean; dtype: NonNullable<ModelSpec["dtype"]> }): Promise<
    TextClassifier
  >;
  /** A model's tokenizer alone, from a model directory (`local`) or a hub repo id. */
  openTokenizer(source: string, options: { local: boolean }): Promise<PreTrainedTokenizer>;
}

/** A sequence-classification model (a cross-encoder), its tokenizer, and the tensors its inputs are made of. */
export interface TextClassifier {
  tokenizer: PreTrainedTokenizer;
  model: PreTrainedModel;
  /** An int64 tensor of the runtime's own class, as the model's inputs must be. */
  int64Tensor(data: BigInt64Array, dims: number[]): Tensor;
}

type Transformers = typeof import("@huggingface/transformers");

/** Imports and configures transformers.js for `backend`. */
export function loadTransformersRuntime(
  backend: EmbeddingBackend,
  options: RuntimeOptions,
): Promise<TransformersRuntime> {
  return backend === "native" ? loadNative(options) : loadWasm(options);
}

async function loadNative(options: RuntimeOptions): Promise<TransformersRuntime> {
  const transformers = await import("@huggingface/transformers");
  const { env, pipeline } = transformers;
  env.cacheDir = options.cacheDir;
  env.allowRemoteModels = options.allowRemote;
  env.allowLocalModels = true;
  const session_options = options.threads === undefined
    ? undefined
    : { intraOpNumThreads: options.threads, interOpNumThreads: 1 };
  return {
    open: (source, { dtype }) => pipeline("feature-extraction", source, { dtype, session_options }),
    openClassifier: (source, { dtype }) => openClassifier(transformers, source, { dtype, session_options }),
    openTokenizer: (source) => transformers.AutoTokenizer.from_pretrained(source),
  };
}

/** Loads a cross-encoder's tokenizer and model with `options` (the weights, and the backend's session settings). */
async function openClassifier(
  transformers: Transformers,
  source: string,
  options: Record<string, unknown>,
): Promise<TextClassifier> {
  const { AutoModelForSequenceClassification, AutoTokenizer, Tensor } = transformers;
  const [tokenizer, model] = await Promise.all([
    AutoTokenizer.from_pretrained(source),
    AutoModelForSequenceClassification.from_pretrained(source, options),
  ]);
  return { tokenizer, model, int64Tensor: (data, dims) => new Tensor("int64", data, dims) };
}

async function loadWasm(options: RuntimeOptions): Promise<TransformersRuntime> {
  // Under Deno the package's exports resolve to the Node build (its "node" condition comes first), which imports
  // onnxruntime-node and sharp, both native. The web build lies beside it and imports onnxruntime-web instead.
  const webBuild = new URL("transformers.web.js", import.meta.resolve("@huggingface/transformers"));
  // The package exports no specifier of the web build, so it is imported by its file URL, written out as one so that
  // `deno publish` can see that no import map is involved.
  const transformers: Transformers = await import(`file://${webBuild.pathname}`);
  const { env, pipeline } = transformers;
  // The onnxruntime-web that the web build imports, whatever version transformers.js pins.
  const ort = createRequire(webBuild);
  const fileUrl = (specifier: string) => pathToFileURL(ort.resolve(specifier)).href;
  // The plain build, not the asyncify one (for WebGPU's asynchronous kernels) that transformers.js would pick: the
  // asyncify binary is twice the size, and opening a model with it took about 150 MiB more RSS and embedded at half
  // the speed (docs/benchmarks.md, "The wasm backend").
  const factory = fileUrl("onnxruntime-web/ort-wasm-simd-threaded.mjs");
  env.backends.onnx.wasm!.wasmPaths = {
    wasm: fileUrl("onnxruntime-web/ort-wasm-simd-threaded.wasm"),
    // transformers.js swaps the factory for a blob: URL of a patched copy, meant for scripts served from a CDN, and
    // Deno refuses import() of blob: URLs inside npm packages; so the file URL stays.
    get mjs() {
      return factory;
    },
    set mjs(_: string) {
      // Ignored, so that onnxruntime-web imports the file.
    },
  };
  // Deno's Cache API would keep downloads on disk; hub models are fetched on every start instead.
  env.useBrowserCache = false;
  env.allowRemoteModels = options.allowRemote;
  env.allowLocalModels = true;
  // A hub model that a native run has cached is read from there.
  env.localModelPath = `${pathToFileURL(resolve(options.cacheDir)).href}/`;
  env.fetch = fetchWithFiles;
  return {
    open: (source, { local, dtype }) =>
      pipeline("feature-extraction", local ? pathToFileURL(source).href : source, { dtype, device: "wasm" }),
    openClassifier: (source, { local, dtype }) =>
      openClassifier(transformers, local ? pathToFileURL(source).href : source, { dtype, device: "wasm" }),
    openTokenizer: (source, { local }) =>
      transformers.AutoTokenizer.from_pretrained(local ? pathToFileURL(source).href : source),
  };
}

/** `fetch`, except that a `file:` URL of a missing file answers 404, as a missing file on a server would. */
async function fetchWithFiles(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const url = new URL(input instanceof Request ? input.url : input);
  if (url.protocol !== "file:") return await fetch(input, init);
  try {
    const bytes = await Deno.readFile(url);
    return new Response(bytes, { headers: { "content-length": String(bytes.byteLength) } });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return new Response(null, { status: 404 });
    throw error;
  }
}
