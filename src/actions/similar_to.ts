/**
 * "More like this": a `search` with `similarTo` ranks by a stored document's vector instead of a query's, and leaves
 * that document out of its answer. A document of several passages is represented by its most central passage (the
 * one nearest to the mean of its passages' directions), which stands for what the whole text is about rather than for
 * where it happens to start.
 */
import type { ServiceContext } from "../context.ts";
import { ApiError } from "../api/api_error.ts";
import { readDocs } from "../storage/doc_records.ts";
import type { IndexRecord } from "../storage/index_records.ts";
import type { SearchIndex } from "../search/search_index.ts";
import type { SearchPage, SearchQuery } from "../search/search_query.ts";
import { type MetadataFilter, metadataValue } from "../search/metadata_filter.ts";
import type { FacetCounts } from "../search/facet_counts.ts";
import { compareScalars, type MetadataScalar, scalarOrUndefined } from "../search/metadata_columns.ts";

/** Whose vector a `similarTo` search ranks by, and the tenant token's filter it must lie within. */
export interface SimilarSource {
  id: string;
  tenantFilter?: MetadataFilter | undefined;
}

/**
 * The vector that a search `similarTo` document `source.id` ranks by: its most central passage's, read from the store
 * as float32. 404 naming the id when the index has no such document (or the tenant token's filter leaves it out), 400
 * when none of its passages has a vector to compare (a zero vector, as of an empty text).
 */
export async function similarVector(
  ctx: ServiceContext,
  record: IndexRecord,
  source: SimilarSource,
): Promise<Float32Array> {
  const { id, tenantFilter } = source;
  const doc = (await readDocs(ctx.kv, record.id, [id]))[0]?.[1];
  if (doc === undefined || !(tenantFilter?.(doc.metadata) ?? true)) {
    throw new ApiError(404, `Document "${id}" not found in index "${record.name}"`);
  }
  const vectors = doc.passages.map(({ vector }) => vector).filter((vector) => vector.some((value) => value !== 0));
  if (vectors.length === 0) {
    throw new ApiError(
      400,
      `Invalid "similarTo": document "${id}" of index "${record.name}" has no vector to compare (a zero vector)`,
    );
  }
  return vectors[centralPassage(vectors)]!;
}

/**
 * The passage (by its place in `vectors`) nearest by cosine to the mean of the passages' unit vectors: the medoid of
 * their directions. The first of two, which are equally near their mean, and the first on any tie.
 */
export function centralPassage(vectors: readonly Float32Array[]): number {
  if (vectors.length <= 2) return 0;
  const units = vectors.map((vector) => {
    const length = Math.hypot(...vector);
    return vector.map((value) => value / length);
  });
  const mean = new Float64Array(units[0]!.length);
  for (const unit of units) unit.forEach((value, i) => mean[i]! += value);
  let best = 0;
  let bestDot = -Infinity;
  units.forEach((unit, i) => {
    let dot = 0;
    unit.forEach((value, d) => dot += value * mean[d]!);
    if (dot > bestDot) [best, bestDot] = [i, dot];
  });
  return best;
}

/**
 * Runs `query` on `index`, leaving out the document `without` when given: its page is cut from one place deeper, and
 * `total` and the facet counts no longer count it. The document is left out after ranking rather than by the filter,
 * since a filter would make every vector search score every document.
 */
export function searchWithout(index: SearchIndex, without: string | undefined, query: SearchQuery): SearchPage {
  if (without === undefined) return index.search(query);
  const { offset, limit, facets, filter } = query;
  const wider = index.search({
    ...query,
    offset: 0,
    limit: offset + limit + 1,
    facets: facets === undefined ? undefined : { ...facets, limit: facets.limit + 1 },
  });
  const content = index.content(without);
  // Whether the search counted the document: it is in the index's state, and passes the filter.
  const counted = content !== undefined && (filter?.(content.metadata) ?? true);
  const page: SearchPage = {
    hits: wider.hits.filter((hit) => hit.id !== without).slice(offset, offset + limit),
    total: Math.max(0, wider.total - (counted ? 1 : 0)),
  };
  if (wider.terms !== undefined) page.terms = wider.terms;
  if (wider.facets !== undefined && facets !== undefined) {
    page.facets = facetsWithout(wider.facets, counted ? content?.metadata : undefined, facets.limit);
  }
  return page;
}

/**
 * Facet counts less one document's values, cut to `limit` values a field. Counted to `limit + 1` values, they are
 * exact: taking one from a value moves it down at most past the value that follows the first `limit`.
 */
function facetsWithout(
  facets: FacetCounts,
  metadata: Record<string, unknown> | undefined,
  limit: number,
): FacetCounts {
  return Object.fromEntries(
    Object.entries(facets).map(([field, values]) => {
      const own = new Set(metadata === undefined ? [] : facetValuesOf(metadataValue(metadata, field)));
      const counts = values.map(({ value, count }) => ({ value, count: own.has(value) ? count - 1 : count }))
        .filter(({ count }) => count > 0)
        .sort((a, b) => b.count - a.count || compareScalars(a.value, b.value));
      return [field, counts.slice(0, limit)];
    }),
  );
}

/** The values that facets count for a metadata value: a scalar, or each distinct scalar of an array. */
function facetValuesOf(value: unknown): MetadataScalar[] {
  const items = Array.isArray(value) ? value : [value];
  return items.map(scalarOrUndefined).filter((item) => item !== undefined);
}
