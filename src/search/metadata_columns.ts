/**
 * Metadata fields as columns, for facets and sort: per field, every slot's value as a code into the field's
 * dictionary of values, so that counting or ordering the matches of a query reads one integer per document instead
 * of its metadata object. A column is built on the first facet or sort by its field (one pass over the documents),
 * then kept current by every write, at the cost of the write's own documents.
 */
import { metadataValue } from "./metadata_filter.ts";
import { compareCodePoints } from "./ranking.ts";

/** A value a document can be faceted or sorted by. */
export type MetadataScalar = string | number | boolean;

const TYPE_RANKS: Record<string, number> = { number: 0, string: 1, boolean: 2 };

/** Orders two metadata values: by type (numbers, strings, booleans), then by value (strings by code point). */
export function compareScalars(a: MetadataScalar, b: MetadataScalar): number {
  const types = TYPE_RANKS[typeof a]! - TYPE_RANKS[typeof b]!;
  if (types !== 0) return types;
  if (typeof a === "string") return compareCodePoints(a, b as string);
  return Number(a) - Number(b);
}

/** The value when it is a string, number or boolean. */
export function scalarOrUndefined(value: unknown): MetadataScalar | undefined {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? value : undefined;
}

/** The code of a slot without a value (or with one that is not a string, number or boolean). */
export const NO_VALUE = -1;
/** The code of a slot whose value is an array: its elements' codes are in {@link MetadataColumn.elements}. */
export const ARRAY_VALUE = -2;

type Metadata = Record<string, unknown> | undefined;

/** One field's column. */
export class MetadataColumn {
  /** The values seen, by code; a value stays once its documents are gone (its count is then 0). */
  readonly values: MetadataScalar[] = [];
  readonly #codes = new Map<MetadataScalar, number>();
  /** Per slot, the code of its value, {@link NO_VALUE} or {@link ARRAY_VALUE}. */
  codes = new Int32Array(0);
  /** The distinct element codes of each slot whose value is an array. */
  readonly elements = new Map<number, number[]>();
  #ranks: Int32Array | undefined;

  constructor(readonly field: string) {}

  /** Sets a slot's value from its metadata (undefined for a slot emptied). */
  set(slot: number, metadata: Metadata): void {
    if (slot >= this.codes.length) {
      const codes = new Int32Array(Math.max(16, slot + 1, this.codes.length * 2)).fill(NO_VALUE);
      codes.set(this.codes);
      this.codes = codes;
    }
    this.elements.delete(slot);
    const value = metadataValue(metadata, this.field);
    if (Array.isArray(value)) {
      const codes = [...new Set(value.map((item) => scalarOrUndefined(item)))]
        .filter((item) => item !== undefined).map((item) => this.#codeOf(item));
      this.elements.set(slot, codes);
      this.codes[slot] = ARRAY_VALUE;
      return;
    }
    const scalar = scalarOrUndefined(value);
    this.codes[slot] = scalar === undefined ? NO_VALUE : this.#codeOf(scalar);
  }

  /** Each code's place in the order of the values (numbers, strings, booleans), computed once per new value. */
  ranks(): Int32Array {
    if (this.#ranks === undefined) {
      const order = this.values.map((_, code) => code).sort((a, b) => compareScalars(this.values[a]!, this.values[b]!));
      this.#ranks = new Int32Array(this.values.length);
      order.forEach((code, rank) => this.#ranks![code] = rank);
    }
    return this.#ranks;
  }

  #codeOf(value: MetadataScalar): number {
    let code = this.#codes.get(value);
    if (code === undefined) {
      code = this.values.length;
      this.values.push(value);
      this.#codes.set(value, code);
      this.#ranks = undefined;
    }
    return code;
  }
}

/** The columns of one index, by field. */
export class MetadataColumns {
  readonly #columns = new Map<string, MetadataColumn>();
  readonly #metadataOf: (slot: number) => Metadata;
  readonly #slotCount: () => number;

  /** `metadataOf` gives a slot's metadata (undefined for an empty slot), `slotCount` the slots, empty ones included. */
  constructor(metadataOf: (slot: number) => Metadata, slotCount: () => number) {
    this.#metadataOf = metadataOf;
    this.#slotCount = slotCount;
  }

  /** The column of `field`, built from every document the first time. */
  column(field: string): MetadataColumn {
    let column = this.#columns.get(field);
    if (column === undefined) {
      column = new MetadataColumn(field);
      const count = this.#slotCount();
      for (let slot = 0; slot < count; slot++) column.set(slot, this.#metadataOf(slot));
      this.#columns.set(field, column);
    }
    return column;
  }

  /** Brings every built column up to date with a slot's new metadata. */
  set(slot: number, metadata: Metadata): void {
    for (const column of this.#columns.values()) column.set(slot, metadata);
  }

  /** Bytes of memory the columns hold, estimated. */
  get bytes(): number {
    let bytes = 0;
    for (const column of this.#columns.values()) bytes += column.codes.byteLength + column.values.length * 48;
    return bytes;
  }
}
