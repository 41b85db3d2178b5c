/** Reads a request body as JSON Lines, one value at a time, so that memory stays bounded however long the body is. */
import { ApiError } from "../api/api_error.ts";
import { LineTooLongError, textLines } from "../util/text_lines.ts";
import { bodyChunks, type BodyTimeouts } from "./body_chunks.ts";

/** One parsed line and its number, counted from 1 over the whole body. */
export interface JsonLine {
  number: number;
  value: unknown;
}

/** How a JSON Lines body is read: its lines' lengths and its deadlines. */
export interface JsonLinesLimits extends BodyTimeouts {
  maxLineBytes: number;
  /** The first line's bound: the request, read before anything else, is small. */
  maxFirstLineBytes: number;
}

/**
 * The non-blank lines of `body`, parsed: 400 naming the line for bad UTF-8 or bad JSON, 413 for a line longer than its
 * bound, 408 for a body that keeps the server waiting too long, 400 for a body cut short.
 */
export async function* readJsonLines(
  body: ReadableStream<Uint8Array> | null,
  limits: JsonLinesLimits,
): AsyncGenerator<JsonLine> {
  if (body === null) return;
  let number = 0;
  try {
    // Characters, not bytes: a cheap bound that a line of at most that many UTF-8 bytes never passes.
    const lineLimits = { maxChars: limits.maxLineBytes, maxFirstChars: limits.maxFirstLineBytes };
    for await (const text of textLines(bodyChunks(body, limits), lineLimits)) {
      number++;
      if (text.trim() === "") continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        throw new ApiError(400, `Line ${number} is not valid JSON`);
      }
      yield { number, value };
    }
  } catch (error) {
    if (error instanceof ApiError) throw error;
    if (error instanceof LineTooLongError) {
      throw new ApiError(413, `Line ${number + 1} is longer than ${error.maxChars} bytes`);
    }
    if (error instanceof TypeError && /encoded data/.test(error.message)) {
      throw new ApiError(400, `Line ${number + 1} is not valid UTF-8`);
    }
    throw new ApiError(400, "Request body could not be read: it ended early or was malformed", { cause: error });
  }
}
