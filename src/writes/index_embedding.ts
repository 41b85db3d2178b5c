/**
 * How the documents of one index get their vectors: from its model, passage by passage, or from the client, for an
 * external model (and for any document that brings its own vector).
 */
import type { ServiceContext } from "../context.ts";
import type { DocInput } from "../api/request_schemas.ts";
import { ApiError } from "../api/api_error.ts";
import { EmbeddingError, type ModelTokens } from "../embedding/embedder.ts";
import { isExternalModel } from "../embedding/model_registry.ts";
import { type PassageSettings, passageSettings } from "../passages/passage_settings.ts";
import type { IndexRecord } from "../storage/index_records.ts";
import { indexModelId } from "./index_model.ts";

/** An index's model and how its texts split into passages; `split` is absent for an external model. */
export interface IndexEmbedding {
  indexName: string;
  modelId: string;
  split?: { tokens: ModelTokens; settings: PassageSettings };
}

/** The embedding of an index; 409 when the server no longer runs its model version, 500 when the model fails. */
export async function indexEmbedding(ctx: ServiceContext, record: IndexRecord): Promise<IndexEmbedding> {
  const modelId = indexModelId(ctx, record);
  const spec = ctx.embedder.spec(modelId)!;
  return await modelCall(modelId, async () => {
    const embedding: IndexEmbedding = { indexName: record.name, modelId };
    if (isExternalModel(spec)) return embedding;
    const tokens = await ctx.embedder.tokens(modelId);
    const settings = record.passages ?? passageSettings(undefined, { id: modelId, ...tokens });
    return { ...embedding, split: { tokens, settings } };
  });
}

/**
 * The passage settings `asked` for an index on `modelId` (a model quire runs), with the model's defaults for the rest;
 * 400 naming the limits the model sets.
 */
export async function checkedPassageSettings(
  ctx: ServiceContext,
  modelId: string,
  asked: Partial<PassageSettings>,
): Promise<PassageSettings> {
  const tokens = await modelCall(modelId, () => ctx.embedder.tokens(modelId));
  return passageSettings(asked, { id: modelId, ...tokens });
}

/** Runs a model call; a model that cannot load or run becomes a 500 that names it and nothing internal. */
export async function modelCall<T>(modelId: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof EmbeddingError)) throw error;
    throw new ApiError(500, `Cannot embed with model "${modelId}"`, { cause: error });
  }
}

/**
 * Checks the documents' own vectors before anything of the batch is written: 400 naming the document and the expected
 * dimensions for a vector of the wrong length or without direction, and for a missing one on an external model.
 */
export async function checkDocVectors(ctx: ServiceContext, record: IndexRecord, docs: DocInput[]): Promise<void> {
  const spec = ctx.embedder.spec(record.modelId);
  const external = spec !== undefined && isExternalModel(spec);
  if (!external && docs.every((doc) => doc.vector === undefined)) return;
  const modelId = indexModelId(ctx, record);
  const dimensions = await modelCall(modelId, () => ctx.embedder.dimensions(modelId));
  for (const doc of docs) {
    const where = `document "${doc.id.slice(0, 64)}"`;
    const expected = `index "${record.name}" (model "${modelId}") takes vectors of ${dimensions} numbers`;
    if (doc.vector === undefined) {
      if (external) throw new ApiError(400, `Invalid docs: ${where} has no "vector", and ${expected}`);
      continue;
    }
    if (doc.vector.length !== dimensions) {
      throw new ApiError(400, `Invalid docs: ${where} has a vector of ${doc.vector.length} numbers; ${expected}`);
    }
    if (doc.vector.every((value) => value === 0)) {
      throw new ApiError(400, `Invalid docs: ${where} has a vector of zeros, which has no direction for cosine`);
    }
  }
}
