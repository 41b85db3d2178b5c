/**
 * `updateSettings`: changes an index's query-time settings (synonyms, pins) without a rebuild. The new settings are
 * written as a new version, and one commit of the index record makes them current, so that every instance's next
 * search (which reads the record) uses them, and `getIndex` shows them within `METADATA_CACHE_MS`.
 */
import type { ServiceContext } from "../context.ts";
import type { RequestOf } from "../api/request_schemas.ts";
import type { IndexView } from "../api/response_schemas.ts";
import type { IndexSettings } from "../api/settings_schemas.ts";
import { ApiError } from "../api/api_error.ts";
import { indexNotFound } from "../api/index_errors.ts";
import { analyzerFor } from "../fulltext/analyzer.ts";
import { DEFAULT_LANGUAGE } from "../fulltext/languages.ts";
import { pinKey } from "../index_state/index_settings.ts";
import { type IndexRecord, readSettledIndex, replaceIndexRecord } from "../storage/index_records.ts";
import { indexKey } from "../storage/kv_keys.ts";
import { deleteSettingsVersion, writeSettingsVersion } from "../storage/settings_records.ts";
import { retryOnConflict } from "../writes/conflict_retries.ts";
import { toIndexView } from "./index_view.ts";

/**
 * Replaces the settings that the request names, keeps the others, and answers the Index with its settings; 404 for
 * an unknown index, 400 for two pins whose queries the index reads alike.
 */
export async function updateSettings(ctx: ServiceContext, request: RequestOf<"updateSettings">): Promise<IndexView> {
  const { projectId, indexName } = request;
  const { record, settings } = await retryOnConflict({ indexName, metrics: ctx.metrics }, async () => {
    const entry = await readSettledIndex(ctx.kv, projectId, indexName);
    if (entry.value === null) throw indexNotFound(indexName);
    const current = entry.value;
    const settings: IndexSettings = { ...(await ctx.settings.of(current)).settings };
    if (request.settings.synonyms !== undefined) settings.synonyms = request.settings.synonyms;
    if (request.settings.pins !== undefined) settings.pins = request.settings.pins;
    checkPins(settings, current.language ?? DEFAULT_LANGUAGE);
    const { settings: _, ...next } = current as IndexRecord;
    const empty = settings.synonyms.length === 0 && settings.pins.length === 0;
    const record: IndexRecord = empty
      ? next
      : { ...next, settings: await writeSettingsVersion(ctx.kv, current.id, settings) };
    if (!await replaceIndexRecord(ctx.kv, entry as Deno.KvEntry<IndexRecord>, record)) {
      if (record.settings !== undefined) await deleteSettingsVersion(ctx.kv, current.id, record.settings.id);
      return undefined;
    }
    // Readers still holding the record before this commit find the old version gone and read the record again.
    if (current.settings !== undefined) await deleteSettingsVersion(ctx.kv, current.id, current.settings.id);
    return { record, settings };
  });
  ctx.records.invalidate(indexKey(projectId, indexName));
  return toIndexView(record, settings);
}

/** 400 when two pins have queries that the index reads alike: which of them should win is not for it to guess. */
function checkPins(settings: IndexSettings, language: string): void {
  const analyzer = analyzerFor(language);
  const seen = new Map<string, number>();
  settings.pins.forEach(({ query }, i) => {
    const key = pinKey(analyzer, query);
    const first = seen.get(key);
    if (first !== undefined) {
      throw new ApiError(
        400,
        `Invalid "settings.pins[${i}].query": "${query.slice(0, 64)}" reads as pin ${first}'s query ` +
          `"${settings.pins[first]!.query.slice(0, 64)}" does in ${language}: join their ids into one pin`,
      );
    }
    seen.set(key, i);
  });
}
