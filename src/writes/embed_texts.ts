/** Embedding for actions: a model failure becomes a 500 that names the model and nothing internal. */
import type { ServiceContext } from "../context.ts";
import { EmbeddingError } from "../embedding/embedder.ts";
import { ApiError } from "../api/api_error.ts";

/** What to embed, with which model. */
export interface EmbeddingJob {
  modelId: string;
  texts: string[];
}

/** Embeds texts; throws a 500 ApiError when the model cannot load or run. */
export async function embedTexts(ctx: ServiceContext, job: EmbeddingJob): Promise<Float32Array[]> {
  try {
    return await ctx.embedder.embed(job.modelId, job.texts);
  } catch (error) {
    if (!(error instanceof EmbeddingError)) throw error;
    throw new ApiError(500, `Cannot embed with model "${job.modelId}"`, { cause: error });
  }
}
