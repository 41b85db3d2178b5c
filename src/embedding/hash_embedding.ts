/**
 * A deterministic lexical embedding for tests: feature hashing of a text's words and of their character trigrams into
 * a fixed number of dimensions, L2-normalised. Texts that share words get close vectors, so that in a test a query
 * ranks first the documents that share its words, with no model files, no network and no native code.
 */

/** The dimensions of the hash embedding, as many as all-MiniLM-L6-v2's, for which it stands in. */
export const HASH_EMBEDDING_DIMENSIONS = 384;

/** A word counts this much; each of its trigrams, which give partial credit to related forms, counts this much. */
const WORD_WEIGHT = 1;
const TRIGRAM_WEIGHT = 0.25;

const WORD = /[\p{L}\p{N}]+/gu;

/** The hash embedding of `text`: unit length, or all zeros for a text without words. */
export function hashEmbedding(text: string, dimensions: number = HASH_EMBEDDING_DIMENSIONS): Float32Array {
  const vector = new Float32Array(dimensions);
  for (const [word] of text.toLowerCase().matchAll(WORD)) {
    addFeature(vector, `w:${word}`, WORD_WEIGHT);
    const padded = ` ${word} `;
    for (let i = 0; i + 3 <= padded.length; i++) addFeature(vector, `t:${padded.slice(i, i + 3)}`, TRIGRAM_WEIGHT);
  }
  let norm = 0;
  for (const value of vector) norm += value * value;
  if (norm > 0) {
    const scale = 1 / Math.sqrt(norm);
    for (let i = 0; i < dimensions; i++) vector[i]! *= scale;
  }
  return vector;
}

/** Adds `weight` to the dimension that `feature` hashes to, with a sign from the hash, so that collisions cancel. */
function addFeature(vector: Float32Array, feature: string, weight: number): void {
  const hash = fnv1a(feature);
  vector[hash % vector.length]! += hash & 0x80000000 ? -weight : weight;
}

/** The 32-bit FNV-1a hash of a string's UTF-16 code units. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
