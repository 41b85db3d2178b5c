/** The registry of embedding models that indexes may use, built in or read from `MODELS_FILE`. */
import { z } from "zod";
import { findAppFile } from "../util/app_files.ts";

const modelSpecSchema = z.strictObject({
  source: z.string().min(1),
  version: z.string().min(1),
  dtype: z.enum(["auto", "fp32", "fp16", "q8", "int8", "uint8", "q4", "bnb4", "q4f16"]).optional(),
});

const registrySchema = z.record(z.string().min(1), modelSpecSchema);

/** Where a model comes from (a hub repo id or a local directory), its version, and its weight type. */
export type ModelSpec = z.output<typeof modelSpecSchema>;

/** Model ids mapped to their specs. */
export type ModelRegistry = Record<string, ModelSpec>;

/** The model an index uses when `createIndex` names none. */
export const DEFAULT_MODEL_ID = "svc-minilm";

/** The models served when no `MODELS_FILE` is given. */
export const BUILT_IN_MODELS: ModelRegistry = {
  "svc-minilm": { source: "Xenova/all-MiniLM-L6-v2", version: "all-MiniLM-L6-v2-q8-1", dtype: "q8" },
  "svc-mediumlm": { source: "Xenova/all-mpnet-base-v2", version: "all-mpnet-base-v2-q8-1", dtype: "q8" },
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
  return result.data;
}
