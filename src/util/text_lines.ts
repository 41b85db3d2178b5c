/** Splits a byte stream into lines of text as it arrives, so that memory stays bounded however long the stream is. */

/** A line longer than the reader allows. */
export class LineTooLongError extends Error {
  constructor(readonly maxChars: number) {
    super(`A line is longer than ${maxChars} characters`);
    this.name = "LineTooLongError";
  }
}

/** The longest lines a reader takes, in characters. */
export interface LineLimits {
  /** Every line's bound. */
  maxChars?: number;
  /** The first line's, when it has one of its own. */
  maxFirstChars?: number;
}

/**
 * The lines of `stream`, UTF-8, without their "\n", blank ones included. Bad UTF-8 throws the decoder's TypeError, and
 * a line longer than its limit a {@link LineTooLongError}, as soon as that many characters have arrived. Each chunk is
 * searched for "\n" once, so a line that arrives in many small chunks costs no more than one that arrives whole.
 */
export async function* textLines(stream: AsyncIterable<Uint8Array>, limits: LineLimits = {}): AsyncGenerator<string> {
  const { maxChars = Infinity, maxFirstChars = maxChars } = limits;
  const decoder = new TextDecoder("utf-8", { fatal: true });
  /** The pieces of the line being read, which ends in a later chunk. */
  let pieces: string[] = [];
  let pendingChars = 0;
  let limit = maxFirstChars;
  const line = (last: string) => {
    if (pendingChars + last.length > limit) throw new LineTooLongError(limit);
    const text = pieces.length === 0 ? last : pieces.join("") + last;
    pieces = [];
    pendingChars = 0;
    limit = maxChars;
    return text;
  };
  for await (const chunk of stream) {
    const text = decoder.decode(chunk, { stream: true });
    let start = 0;
    let end;
    while ((end = text.indexOf("\n", start)) !== -1) {
      yield line(text.slice(start, end));
      start = end + 1;
    }
    if (start < text.length) {
      pieces.push(start === 0 ? text : text.slice(start));
      pendingChars += text.length - start;
      if (pendingChars > limit) throw new LineTooLongError(limit);
    }
  }
  const rest = line(decoder.decode());
  if (rest !== "") yield rest;
}
