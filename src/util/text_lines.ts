/** Splits a byte stream into lines of text as it arrives, so that memory stays bounded however long the stream is. */

/** A line longer than the reader allows. */
export class LineTooLongError extends Error {
  constructor(maxChars: number) {
    super(`A line is longer than ${maxChars} characters`);
    this.name = "LineTooLongError";
  }
}

/**
 * The lines of `stream`, UTF-8, without their "\n", blank ones included. Bad UTF-8 throws the decoder's TypeError, and
 * a line of more than `maxChars` characters a {@link LineTooLongError}.
 */
export async function* textLines(stream: ReadableStream<Uint8Array>, maxChars = Infinity): AsyncGenerator<string> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let pending = "";
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = pending.indexOf("\n")) !== -1) {
      yield pending.slice(0, end);
      pending = pending.slice(end + 1);
    }
    if (pending.length > maxChars) throw new LineTooLongError(maxChars);
  }
  pending += decoder.decode();
  if (pending !== "") yield pending;
}
