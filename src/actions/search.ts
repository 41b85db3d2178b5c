/** `search`: full-text, vector or hybrid retrieval over one index, filtered by metadata. */
import type { ServiceContext } from "../context.ts";
import { HIT_FIELDS, type RequestOf } from "../api/request_schemas.ts";
import type { SearchHit, SearchResult } from "../api/response_schemas.ts";
import { readSettledIndex } from "../storage/index_records.ts";
import type { SearchIndex } from "../search/search_index.ts";
import { indexNotFound } from "../api/index_errors.ts";
import { indexModelId } from "../writes/index_model.ts";
import { embedTexts } from "../writes/embed_texts.ts";

/** Searches the latest acknowledged state of an index; 404 if unknown. */
export async function search(ctx: ServiceContext, request: RequestOf<"search">): Promise<SearchResult> {
  const started = performance.now();
  const entry = await readSettledIndex(ctx.kv, request.projectId, request.indexName);
  if (entry.value === null) throw indexNotFound(request.indexName);
  const record = entry.value;
  const mode = request.mode ?? "hybrid";
  const modelId = mode === "fulltext" ? undefined : indexModelId(ctx, record);
  // The query is embedded while the index loads (a cold load and a first model load overlap).
  const embedding = modelId === undefined || record.docCount === 0
    ? undefined
    : embedTexts(ctx, { modelId, texts: [request.query] });
  embedding?.catch(() => {}); // Awaited below, unless the index turns out empty.
  const index = await ctx.indexStates.get(record);
  if (index.size === 0) return { hits: [], total: 0, tookMs: elapsedMs(started) };
  const [vector] = modelId === undefined
    ? []
    : await (embedding ?? embedTexts(ctx, { modelId, texts: [request.query] }));
  const page = index.search({
    mode,
    text: request.query,
    vector,
    filter: request.filter,
    offset: request.offset ?? 0,
    limit: request.limit ?? 10,
  });
  const include = new Set(request.include ?? HIT_FIELDS);
  return {
    hits: page.hits.map(({ id, score }) => toHit(index, { id, score, include })),
    total: page.total,
    tookMs: elapsedMs(started),
  };
}

function elapsedMs(since: number): number {
  return Math.round((performance.now() - since) * 1000) / 1000;
}

interface HitSource {
  id: string;
  score: number;
  include: Set<string>;
}

function toHit(index: SearchIndex, { id, score, include }: HitSource): SearchHit {
  const hit: SearchHit = { id };
  const content = index.content(id)!;
  if (include.has("score")) hit.score = score;
  if (include.has("text")) hit.text = content.text;
  if (include.has("metadata") && content.metadata !== undefined) hit.metadata = content.metadata;
  return hit;
}
