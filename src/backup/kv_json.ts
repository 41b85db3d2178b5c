/**
 * Deno KV keys and values as JSON, losslessly: what JSON lacks (bytes, bigints, `undefined`, non-finite numbers and
 * -0, dates, maps, sets, typed arrays, `Deno.KvU64`) becomes an object tagged `$`, and a plain object that has a key
 * `$` of its own is wrapped, so that no stored object is taken for a tag.
 */

/** JSON as `JSON.stringify` writes it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const TYPED_ARRAYS = {
  Int8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
} as const;

type TypedArrayName = keyof typeof TYPED_ARRAYS;

function isTypedArrayName(name: string): name is TypedArrayName {
  return Object.hasOwn(TYPED_ARRAYS, name);
}

/** A stored key or value as JSON; throws a TypeError for what Deno KV does not store either (functions, symbols). */
export function toKvJson(value: unknown): Json {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (Object.is(value, -0)) return { $: "number", v: "-0" };
      return Number.isFinite(value) ? value : { $: "number", v: String(value) };
    case "bigint":
      return { $: "bigint", v: value.toString() };
    case "undefined":
      return { $: "undefined" };
    case "object":
      return objectToJson(value);
    default:
      throw new TypeError(`Cannot back up a value of type ${typeof value}`);
  }
}

function objectToJson(value: object | null): Json {
  if (value === null) return null;
  if (Array.isArray(value)) return Array.from(value, toKvJson);
  if (value instanceof Uint8Array) return { $: "bytes", v: value.toBase64() };
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    const bytes = new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    return { $: "typed", t: value.constructor.name, v: bytes.toBase64() };
  }
  if (value instanceof ArrayBuffer) return { $: "buffer", v: new Uint8Array(value).toBase64() };
  if (value instanceof Deno.KvU64) return { $: "u64", v: value.value.toString() };
  if (value instanceof Date) return { $: "date", v: value.getTime() };
  if (value instanceof Map) return { $: "map", v: [...value].map(([k, v]) => [toKvJson(k), toKvJson(v)]) };
  if (value instanceof Set) return { $: "set", v: [...value].map(toKvJson) };
  const out: { [key: string]: Json } = {};
  for (const [key, inner] of Object.entries(value)) defineKey(out, key, toKvJson(inner));
  return Object.hasOwn(out, "$") ? { $: "object", v: out } : out;
}

/** The key or value that {@link toKvJson} wrote; throws a TypeError for a tag it does not know. */
export function fromKvJson(json: Json): unknown {
  if (json === null || typeof json !== "object") return json;
  if (Array.isArray(json)) return json.map(fromKvJson);
  if (!Object.hasOwn(json, "$")) return plainObject(json);
  const v = json.v;
  switch (json.$) {
    case "number":
      return Number(v);
    case "bigint":
      return BigInt(v as string);
    case "undefined":
      return undefined;
    case "bytes":
      return Uint8Array.fromBase64(v as string);
    case "typed": {
      const name = String(json.t);
      if (!isTypedArrayName(name)) throw new TypeError(`Unknown typed array "${name}" in a backup`);
      const bytes = Uint8Array.fromBase64(v as string);
      return new TYPED_ARRAYS[name](bytes.buffer, 0, bytes.byteLength / TYPED_ARRAYS[name].BYTES_PER_ELEMENT);
    }
    case "buffer":
      return Uint8Array.fromBase64(v as string).buffer;
    case "u64":
      return new Deno.KvU64(BigInt(v as string));
    case "date":
      return new Date(v as number);
    case "map":
      return new Map((v as [Json, Json][]).map(([key, inner]) => [fromKvJson(key), fromKvJson(inner)]));
    case "set":
      return new Set((v as Json[]).map(fromKvJson));
    case "object":
      return plainObject(v as { [key: string]: Json });
    default:
      throw new TypeError(`Unknown tag ${JSON.stringify(json.$)} in a backup`);
  }
}

function plainObject(json: { [key: string]: Json }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(json)) defineKey(out, key, fromKvJson(inner));
  return out;
}

/** Sets an own property, so that a stored key `__proto__` stays a key and sets no prototype. */
function defineKey(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
