/** Opaque page cursors of `getDocs` and `listIndexes`: the last key of a page, base64url-encoded. */
import { ApiError } from "./api_error.ts";

/** The response header that carries the cursor of the next page; absent on the last page. */
export const NEXT_CURSOR_HEADER = "x-next-cursor";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** The cursor that continues after `lastKey`. */
export function encodeCursor(lastKey: string): string {
  return encoder.encode(lastKey).toBase64({ alphabet: "base64url", omitPadding: true });
}

/** The key a cursor continues after; 400 for a cursor this service did not make. */
export function decodeCursor(cursor: string): string {
  try {
    return decoder.decode(Uint8Array.fromBase64(cursor, { alphabet: "base64url" }));
  } catch {
    throw new ApiError(400, `Invalid "options.cursor": not a cursor from "${NEXT_CURSOR_HEADER}"`);
  }
}
