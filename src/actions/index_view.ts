/** The Index object of the spec, as `getIndex` and `listIndexes` return it. */
import type { IndexView } from "../api/response_schemas.ts";
import type { IndexSettings } from "../api/settings_schemas.ts";
import type { IndexRecord } from "../storage/index_records.ts";
import { DEFAULT_LANGUAGE } from "../fulltext/languages.ts";
import type { ServiceContext } from "../context.ts";

/** Shows a stored index record as the API's Index object, its settings read through the instance's cache. */
export async function indexView(ctx: ServiceContext, record: IndexRecord): Promise<IndexView> {
  return toIndexView(record, (await ctx.settings.of(record)).settings);
}

/** Shows a stored index record and its settings as the API's Index object. */
export function toIndexView(record: IndexRecord, settings: IndexSettings): IndexView {
  const view: IndexView = {
    id: record.id,
    name: record.name,
    version: String(record.revision),
    status: "Ready",
    docCount: record.docCount,
    passageCount: record.passageCount ?? record.docCount,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    model: { id: record.modelId, version: record.modelVersion },
    language: record.language ?? DEFAULT_LANGUAGE,
    settings,
  };
  const job = record.job;
  if (job?.state === "running") {
    view.status = job.kind === "create" ? "Building" : "Updating";
    view.progress = { done: job.done, total: job.total };
  } else if (job?.state === "failed") {
    view.status = "Failed";
    view.error = job.error ?? "The queued write failed";
  }
  return view;
}
