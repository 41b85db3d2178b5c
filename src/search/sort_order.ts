/**
 * Orders search matches by metadata fields, as `sort` asks: field by field, documents without a field last, then by
 * score, then by id. Values of different types order numbers, then strings (by code point), then booleans (false
 * first); `desc` reverses that. An array or object value sorts as a missing one.
 */
import { ARRAY_VALUE, type MetadataColumns, NO_VALUE } from "./metadata_columns.ts";
import { compareCodePoints, type Page, rankPageBy } from "./ranking.ts";
import type { ScoredSlots } from "./vector_store.ts";

/** One sort key of a search. */
export interface SortField {
  field: string;
  order: "asc" | "desc";
}

/** The positions into `found` of one page of its matches in the order `fields` asks. */
export function sortOrder(
  found: ScoredSlots,
  columns: MetadataColumns,
  idOf: (slot: number) => string,
  fields: SortField[],
  page: Page,
): number[] {
  // Per field, each match's rank among the field's values; -1 when it has none.
  const keys = fields.map(({ field, order }) => {
    const column = columns.column(field);
    const ranks = column.ranks();
    const keys = new Int32Array(found.slots.length);
    for (let i = 0; i < keys.length; i++) {
      const code = column.codes[found.slots[i]!] ?? NO_VALUE;
      keys[i] = code === NO_VALUE || code === ARRAY_VALUE
        ? -1
        : order === "asc"
        ? ranks[code]!
        : ranks.length - ranks[code]!;
    }
    return keys;
  });
  return rankPageBy(found.slots.length, (a, b) => {
    for (const key of keys) {
      const [x, y] = [key[a]!, key[b]!];
      if (x === y) continue;
      // Missing last, whichever the order.
      if (x === -1 || y === -1) return y === -1;
      return x < y;
    }
    const diff = found.scores[a]! - found.scores[b]!;
    return diff !== 0 ? diff > 0 : compareCodePoints(idOf(found.slots[a]!), idOf(found.slots[b]!)) < 0;
  }, page);
}
