/** Project access keys: random, shown once, stored only as SHA-256 hashes, and compared in constant time. */
import { timingSafeEqual } from "node:crypto";
import { sha256Hex } from "../util/sha256_hex.ts";

const encoder = new TextEncoder();

/** Makes a new random key with 256 bits of entropy. */
export function generateProjectKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `qk_${bytes.toBase64({ alphabet: "base64url", omitPadding: true })}`;
}

/** The hex SHA-256 hash under which a key is stored. */
export function hashProjectKey(key: string): string {
  return sha256Hex(key);
}

/** Whether `key` hashes to `storedHash`, compared in constant time. */
export function verifyProjectKey(key: string, storedHash: string): boolean {
  return hashesMatch(hashProjectKey(key), storedHash);
}

/** Whether two key hashes are equal, compared in constant time. */
export function hashesMatch(hash: string, storedHash: string): boolean {
  const actual = encoder.encode(hash);
  const expected = encoder.encode(storedHash);
  return actual.byteLength === expected.byteLength && timingSafeEqual(actual, expected);
}
