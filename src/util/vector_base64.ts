/** Vectors as base64 of their little-endian float32 values: how exports carry them, and clients may send them. */

/** A vector as base64 of its float32 bytes. */
export function encodeVector(vector: Float32Array): string {
  return new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength).toBase64();
}

/** The vector that {@link encodeVector} wrote; undefined for text that is not base64 of whole, finite float32 values. */
export function decodeVector(text: string): Float32Array | undefined {
  // Standard base64 only, padded or not: no white space, which the decoder alone would skip (it refuses padding that
  // is not at the end). Searching for one wrong character costs far less than matching the whole text to a pattern.
  if (/[^A-Za-z0-9+/=]/.test(text)) return undefined;
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = Uint8Array.fromBase64(text);
  } catch {
    return undefined;
  }
  if (bytes.byteLength === 0 || bytes.byteLength % 4 !== 0) return undefined;
  const vector = new Float32Array(bytes.buffer, 0, bytes.byteLength / 4);
  for (let i = 0; i < vector.length; i++) if (!Number.isFinite(vector[i]!)) return undefined;
  return vector;
}
