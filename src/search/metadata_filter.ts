/**
 * The `search` filter language: Mongo-style predicates over document metadata, as Pinecone and Chroma users write
 * them. `{"genre": "drama"}`, `{"year": {"$gte": 2020, "$lt": 2024}}`, `{"lang": {"$in": ["en", "de"]}}`, `$ne`,
 * `$nin`, `$exists`, and `$and` / `$or` over lists of predicates. A filter is parsed once into a plain function.
 */
import { compareCodePoints } from "./ranking.ts";

/** A parsed filter: whether a document's metadata matches it. */
export type MetadataFilter = (metadata: Record<string, unknown> | undefined) => boolean;

/** A value a filter compares with. */
type Scalar = string | number | boolean;

/** Why a filter is malformed, and where: the path of keys and list positions inside the filter. */
export class FilterSyntaxError extends Error {
  constructor(readonly path: (string | number)[], message: string) {
    super(message);
    this.name = "FilterSyntaxError";
  }
}

/** How deeply `$and` / `$or` may nest. */
export const MAX_FILTER_DEPTH = 16;

const FIELD_OPERATORS = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists"] as const;
type FieldOperator = typeof FIELD_OPERATORS[number];
const OPERATOR_LIST = ["$and", "$or", ...FIELD_OPERATORS].join(", ");

/** Parses a filter; throws {@link FilterSyntaxError} naming the bad operator or path. */
export function parseFilter(value: unknown): MetadataFilter {
  return parsePredicate(value, [], 0);
}

function parsePredicate(value: unknown, path: (string | number)[], depth: number): MetadataFilter {
  if (!isPlainObject(value)) throw new FilterSyntaxError(path, "expected an object of conditions");
  const parts = Object.entries(value).map(([key, operand]): MetadataFilter => {
    if (key === "$and" || key === "$or") return parseLogical(key, operand, [...path, key], depth);
    if (key.startsWith("$")) throw unknownOperator([...path, key], key);
    return parseField(key, operand, [...path, key]);
  });
  return allOf(parts);
}

function parseLogical(key: "$and" | "$or", operand: unknown, path: (string | number)[], depth: number): MetadataFilter {
  if (depth >= MAX_FILTER_DEPTH) {
    throw new FilterSyntaxError(path, `nests "$and"/"$or" deeper than ${MAX_FILTER_DEPTH} levels`);
  }
  if (!Array.isArray(operand) || operand.length === 0) {
    throw new FilterSyntaxError(path, `expected a non-empty array of conditions`);
  }
  const parts = operand.map((item, i) => parsePredicate(item, [...path, i], depth + 1));
  return key === "$and" ? allOf(parts) : (metadata) => parts.some((part) => part(metadata));
}

function parseField(field: string, operand: unknown, path: (string | number)[]): MetadataFilter {
  if (isScalar(operand)) return fieldFilter(field, (value) => equals(value, operand));
  if (!isPlainObject(operand)) {
    throw new FilterSyntaxError(
      path,
      Array.isArray(operand)
        ? `expected a string, number, boolean or operator object; to match any of several values use {"$in": [...]}`
        : `expected a string, number, boolean or operator object; to match a missing field use {"$exists": false}`,
    );
  }
  const entries = Object.entries(operand);
  if (entries.length === 0) throw new FilterSyntaxError(path, `expected at least one operator, such as "$eq"`);
  return allOf(entries.map(([operator, argument]) => {
    if (!(FIELD_OPERATORS as readonly string[]).includes(operator)) {
      throw unknownOperator([...path, operator], operator);
    }
    return parseOperator(field, operator as FieldOperator, argument, [...path, operator]);
  }));
}

function parseOperator(field: string, operator: FieldOperator, argument: unknown, path: (string | number)[]) {
  switch (operator) {
    case "$eq": {
      const target = scalar(argument, path);
      return fieldFilter(field, (value) => equals(value, target));
    }
    case "$ne": {
      const target = scalar(argument, path);
      return negate(fieldFilter(field, (value) => equals(value, target)));
    }
    case "$gt":
    case "$gte":
    case "$lt":
    case "$lte": {
      const bound = orderable(argument, path);
      const accepts = RANGE_TESTS[operator];
      return fieldFilter(field, (value) => someElement(value, (item) => compare(item, bound, accepts)));
    }
    case "$in": {
      const targets = scalars(argument, path);
      return fieldFilter(field, (value) => targets.some((target) => equals(value, target)));
    }
    case "$nin": {
      const targets = scalars(argument, path);
      return negate(fieldFilter(field, (value) => targets.some((target) => equals(value, target))));
    }
    case "$exists": {
      if (typeof argument !== "boolean") throw new FilterSyntaxError(path, "expected true or false");
      return (metadata: Record<string, unknown> | undefined) =>
        (metadataValue(metadata, field) !== undefined) === argument;
    }
  }
}

const RANGE_TESTS: Record<"$gt" | "$gte" | "$lt" | "$lte", (order: number) => boolean> = {
  $gt: (order) => order > 0,
  $gte: (order) => order >= 0,
  $lt: (order) => order < 0,
  $lte: (order) => order <= 0,
};

/** Compares a metadata value with a bound of the same type; values of other types never match. */
function compare(value: unknown, bound: string | number, accepts: (order: number) => boolean): boolean {
  if (typeof bound === "number") return typeof value === "number" && accepts(value - bound);
  return typeof value === "string" && accepts(compareCodePoints(value, bound));
}

function unknownOperator(path: (string | number)[], operator: string): FilterSyntaxError {
  return new FilterSyntaxError(path, `unknown operator "${operator}": use one of ${OPERATOR_LIST}`);
}

function scalar(argument: unknown, path: (string | number)[]): Scalar {
  if (!isScalar(argument)) throw new FilterSyntaxError(path, "expected a string, number or boolean");
  return argument;
}

function orderable(argument: unknown, path: (string | number)[]): string | number {
  if (typeof argument !== "number" && typeof argument !== "string") {
    throw new FilterSyntaxError(path, "expected a number or string");
  }
  return argument;
}

function scalars(argument: unknown, path: (string | number)[]): Scalar[] {
  if (!Array.isArray(argument)) throw new FilterSyntaxError(path, "expected an array of strings, numbers or booleans");
  return argument.map((item, i) => scalar(item, [...path, i]));
}

/** A test of one field's value; a missing field fails it. */
function fieldFilter(field: string, test: (value: unknown) => boolean): MetadataFilter {
  return (metadata) => {
    const value = metadataValue(metadata, field);
    return value !== undefined && test(value);
  };
}

function negate(filter: MetadataFilter): MetadataFilter {
  return (metadata) => !filter(metadata);
}

function allOf(parts: MetadataFilter[]): MetadataFilter {
  return parts.length === 1 ? parts[0]! : (metadata) => parts.every((part) => part(metadata));
}

/** A scalar value equals the target; an array equals it when any element does. */
function equals(value: unknown, target: Scalar): boolean {
  return someElement(value, (item) => item === target);
}

function someElement(value: unknown, test: (item: unknown) => boolean): boolean {
  return Array.isArray(value) ? value.some(test) : test(value);
}

/**
 * The value at `field`: the key itself when the metadata has it, otherwise a dotted path into nested objects
 * (`"author.name"`).
 */
export function metadataValue(metadata: Record<string, unknown> | undefined, field: string): unknown {
  if (metadata === undefined) return undefined;
  if (Object.hasOwn(metadata, field)) return metadata[field];
  let value: unknown = metadata;
  for (const key of field.split(".")) {
    if (!isPlainObject(value) || !Object.hasOwn(value, key)) return undefined;
    value = value[key];
  }
  return value;
}

function isScalar(value: unknown): value is Scalar {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean";
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
