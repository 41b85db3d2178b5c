/** The registry of the models quire runs, built in or read from `MODELS_FILE`: embedding models and rerankers. */
import { z } from "zod";
import { findAppFile } from "../util/app_files.ts";

/** A weight type of a model: `fp32`, or a quantised or half-precision variant that the model's files provide. */
export type ModelDtype = "auto" | "fp32" | "fp16" | "q8" | "int8" | "uint8" | "q4" | "bnb4" | "q4f16";

const MODEL_DTYPES = [
  "auto",
  "fp32",
  "fp16",
  "q8",
  "int8",
  "uint8",
  "q4",
  "bnb4",
  "q4f16",
] as const satisfies readonly ModelDtype[];

/** What a model does: embed texts for indexes, or score (query, text) pairs as a cross-encoder for `rerank`. */
export type ModelKind = "embedding" | "reranker";

/**
 * Where a model comes from (a hub repo id or a local directory), its version, and its weight type; or, without a
 * `source`, an external model: its `dimensions`, and vectors that clients send with every document.
 */
export interface ModelSpec {
  /** `embedding` when absent; a `reranker` is a cross-encoder that `search`'s `rerank` names. */
  kind?: ModelKind;
  /**
   * A hub repo id (e.g. `Xenova/all-MiniLM-L6-v2`), a model directory, or `quire:hash` for the hash embedding; absent
   * for an external model.
   */
  source?: string;
  /** Stored with each index; an index answers 409 once its model's version changes. */
  version: string;
  /** `fp32` when absent. */
  dtype?: ModelDtype;
  /** The length of the model's vectors: required for an external model, checked against the model's otherwise. */
  dimensions?: number;
}

/** Most dimensions of a vector that any model may have. */
export const MAX_DIMENSIONS = 4096;

const modelSpecSchema: z.ZodType<ModelSpec> = z.strictObject({
  kind: z.enum(["embedding", "reranker"]).optional(),
  source: z.string().min(1).optional(),
  version: z.string().min(1),
  dtype: z.enum(MODEL_DTYPES).optional(),
  dimensions: z.number().int().min(1).max(MAX_DIMENSIONS).optional(),
}).refine((spec) => spec.source !== undefined || spec.dimensions !== undefined, {
  message: 'needs a "source", or "dimensions" for an external model whose vectors clients send',
}).refine((spec) => spec.kind !== "reranker" || (spec.source !== undefined && spec.dimensions === undefined), {
  message: 'a reranker needs a "source" (a hub repo id or a model directory) and has no "dimensions"',
});

/** The entries of `registry` of one kind (an entry without a `kind` is an embedding model). */
export function modelsOfKind(registry: ModelRegistry, kind: ModelKind): ModelRegistry {
  return Object.fromEntries(Object.entries(registry).filter(([, spec]) => (spec.kind ?? "embedding") === kind));
}

/** Whether a model is external: quire stores and searches its vectors, and clients compute them. */
export function isExternalModel(spec: ModelSpec): boolean {
  return spec.source === undefined;
}

const registrySchema = z.record(z.string().min(1), modelSpecSchema);

/** Model ids mapped to their specs. */
export type ModelRegistry = Record<string, ModelSpec>;

/** The model an index uses when `createIndex` names none. */
export const DEFAULT_MODEL_ID = "svc-minilm";

/** The reranker of the built-in registry. */
export const DEFAULT_RERANKER_ID = "svc-rerank";

/** The models served when no `MODELS_FILE` is given. */
export const BUILT_IN_MODELS: ModelRegistry = {
  "svc-minilm": { source: "Xenova/all-MiniLM-L6-v2", version: "all-MiniLM-L6-v2-q8-1", dtype: "q8" },
  "svc-mediumlm": { source: "Xenova/all-mpnet-base-v2", version: "all-mpnet-base-v2-q8-1", dtype: "q8" },
  [DEFAULT_RERANKER_ID]: {
    kind: "reranker",
    source: "Xenova/ms-marco-MiniLM-L-6-v2",
    version: "ms-marco-MiniLM-L-6-v2-q8-1",
    dtype: "q8",
  },
};

/**
 * The `source` of the built-in hash embedding (`hash_embedding.ts`): lexical, deterministic, without model files. A
 * registry serves it only where it names it, as the test harness's does.
 */
export const HASH_MODEL_SOURCE = "quire:hash";

/**
 * The models of the test harness: the hash embedding under its own id and standing in for the default model, so that
 * indexes created without a `modelId` work in tests with no network and no files.
 */
export const HASH_MODELS: ModelRegistry = {
  [DEFAULT_MODEL_ID]: { source: HASH_MODEL_SOURCE, version: "hash-384-1" },
  "svc-hash": { source: HASH_MODEL_SOURCE, version: "hash-384-1" },
};

/** Reads and checks a registry file; it must define the default model. */
export async function readModelRegistry(path: string): Promise<ModelRegistry> {
  let json: unknown;
  try {
    json = JSON.parse(await Deno.readTextFile(await findAppFile(path, "file") ?? path));
  } catch (error) {
    throw new Error(`Cannot read MODELS_FILE "${path}": ${(error as Error).message}`);
  }
  const result = registrySchema.safeParse(json);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`);
    throw new Error(`Invalid MODELS_FILE "${path}": ${problems.join("; ")}`);
  }
  if (!Object.hasOwn(result.data, DEFAULT_MODEL_ID)) {
    throw new Error(`Invalid MODELS_FILE "${path}": it must define the default model "${DEFAULT_MODEL_ID}"`);
  }
  if (result.data[DEFAULT_MODEL_ID]!.kind === "reranker") {
    throw new Error(
      `Invalid MODELS_FILE "${path}": the default model "${DEFAULT_MODEL_ID}" must be an embedding model`,
    );
  }
  return result.data;
}
