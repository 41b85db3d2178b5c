/** Reads a request body as JSON Lines, one value at a time, so that memory stays bounded however long the body is. */
import { ApiError } from "../api/api_error.ts";
import { LineTooLongError, textLines } from "../util/text_lines.ts";

/** One parsed line and its number, counted from 1 over the whole body. */
export interface JsonLine {
  number: number;
  value: unknown;
}

/**
 * The non-blank lines of `body`, parsed: 400 naming the line for bad UTF-8 or bad JSON, 413 for a line longer than
 * `maxLineBytes`, 400 for a body cut short.
 */
export async function* readJsonLines(
  body: ReadableStream<Uint8Array> | null,
  maxLineBytes: number,
): AsyncGenerator<JsonLine> {
  if (body === null) return;
  let number = 0;
  try {
    // Characters, not bytes: a cheap bound that a line of at most maxLineBytes UTF-8 bytes never passes.
    for await (const text of textLines(body, maxLineBytes)) {
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
      throw new ApiError(413, `Line ${number + 1} is longer than ${maxLineBytes} bytes`);
    }
    if (error instanceof TypeError && /encoded data/.test(error.message)) {
      throw new ApiError(400, `Line ${number + 1} is not valid UTF-8`);
    }
    throw new ApiError(400, "Request body could not be read: it ended early or was malformed", { cause: error });
  }
}
