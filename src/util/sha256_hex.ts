/** SHA-256 as lowercase hex, for content hashes and key hashes. */
import { createHash } from "node:crypto";

/** The lowercase hex SHA-256 digest of a string's UTF-8 bytes; synchronous, so that hot paths await nothing. */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}
