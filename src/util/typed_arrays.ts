/** Growing the flat typed arrays that hold per-slot data. */

/** The typed arrays that {@link grownTo} copies. */
export type NumberArray = Float32Array | Float64Array | Int8Array | Uint8Array | Uint32Array;

/** A new array of the same type with `length` elements, `array`'s first and zeros after. */
export function grownTo<T extends NumberArray>(array: T, length: number): T {
  const grown = new (array.constructor as new (length: number) => T)(length);
  grown.set(array as ArrayLike<number>);
  return grown;
}
