/** Reads a request body as JSON Lines, one value at a time, so that memory stays bounded however long the body is. */
import { ApiError } from "../api/api_error.ts";

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
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let pending = "";
  let number = 0;
  const parse = (text: string): JsonLine | undefined => {
    number++;
    if (text.trim() === "") return undefined;
    try {
      return { number, value: JSON.parse(text) };
    } catch {
      throw new ApiError(400, `Line ${number} is not valid JSON`);
    }
  };
  try {
    for await (const chunk of body) {
      pending += decoder.decode(chunk, { stream: true });
      let end;
      while ((end = pending.indexOf("\n")) !== -1) {
        const line = parse(pending.slice(0, end));
        pending = pending.slice(end + 1);
        if (line !== undefined) yield line;
      }
      // Characters, not bytes: a cheap bound that a line of at most maxLineBytes UTF-8 bytes never passes.
      if (pending.length > maxLineBytes) {
        throw new ApiError(413, `Line ${number + 1} is longer than ${maxLineBytes} bytes`);
      }
    }
    pending += decoder.decode();
  } catch (error) {
    if (error instanceof ApiError) throw error;
    if (error instanceof TypeError && /encoded data/.test(error.message)) {
      throw new ApiError(400, `Line ${number + 1} is not valid UTF-8`);
    }
    throw new ApiError(400, "Request body could not be read: it ended early or was malformed", { cause: error });
  }
  const last = parse(pending);
  if (last !== undefined) yield last;
}
