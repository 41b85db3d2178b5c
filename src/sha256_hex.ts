/** SHA-256 as lowercase hex, for content hashes and key hashes. */

const encoder = new TextEncoder();

/** The lowercase hex SHA-256 digest of a string's UTF-8 bytes. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}
