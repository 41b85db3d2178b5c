/**
 * Facet counts: for each metadata field asked, how many of the matching documents hold each value, the most common
 * first (then in value order), at most `limit` values per field. An array counts each of its distinct elements once.
 */
import { ARRAY_VALUE, compareScalars, type MetadataColumns, type MetadataScalar } from "./metadata_columns.ts";

/** The fields to count and the most values to give per field. */
export interface FacetRequest {
  fields: string[];
  limit: number;
}

/** One value of a field and how many matching documents hold it. */
export interface FacetValue {
  value: MetadataScalar;
  count: number;
}

/** Per field asked, its values; a field that no matching document has gives an empty list. */
export type FacetCounts = Record<string, FacetValue[]>;

/** Counts the values of the fields of `request` over the documents in `slots`. */
export function facetCounts(slots: ArrayLike<number>, columns: MetadataColumns, request: FacetRequest): FacetCounts {
  // fromEntries, so that a field named "__proto__" is a field like any other.
  return Object.fromEntries(request.fields.map((field) => {
    const column = columns.column(field);
    const counts = new Uint32Array(column.values.length);
    const codes = column.codes;
    for (let i = 0; i < slots.length; i++) {
      const code = codes[slots[i]!]!;
      if (code >= 0) counts[code]!++;
      else if (code === ARRAY_VALUE) { for (const element of column.elements.get(slots[i]!)!) counts[element]!++; }
    }
    const values: FacetValue[] = [];
    counts.forEach((count, code) => {
      if (count > 0) values.push({ value: column.values[code]!, count });
    });
    values.sort((a, b) => b.count - a.count || compareScalars(a.value, b.value));
    return [field, values.slice(0, request.limit)];
  }));
}
