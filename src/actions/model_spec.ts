/** The registry entry of a model that a request names. */
import type { ServiceContext } from "../context.ts";
import { ApiError } from "../api/api_error.ts";
import type { ModelSpec } from "../embedding/model_registry.ts";

/** The spec of `modelId`; 400 listing the models this server runs when it runs no such model. */
export function requestedModel(ctx: ServiceContext, modelId: string): ModelSpec {
  const spec = ctx.embedder.spec(modelId);
  if (spec === undefined) {
    const known = ctx.embedder.modelIds().map((id) => `"${id}"`).join(", ");
    throw new ApiError(400, `Unknown model "${modelId}": use one of ${known}`);
  }
  return spec;
}
