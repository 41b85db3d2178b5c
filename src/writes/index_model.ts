/** Checks that this server still runs the model version an index was embedded with. */
import type { ServiceContext } from "../context.ts";
import { ApiError } from "../api/api_error.ts";
import type { IndexRecord } from "../storage/index_records.ts";

/**
 * Returns the index's model id; 409 when the model registry no longer has that model at the version that embedded
 * the index, because new vectors would not be comparable with the stored ones.
 */
export function indexModelId(ctx: ServiceContext, record: IndexRecord): string {
  const spec = ctx.embedder.spec(record.modelId);
  if (spec === undefined) {
    throw new ApiError(409, `Index "${record.name}" uses model "${record.modelId}", which this server does not run`);
  }
  if (spec.version !== record.modelVersion) {
    throw new ApiError(
      409,
      `Index "${record.name}" was embedded with version "${record.modelVersion}" of model "${record.modelId}": ` +
        `this server runs version "${spec.version}"`,
    );
  }
  return record.modelId;
}
