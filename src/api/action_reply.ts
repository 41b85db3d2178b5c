/**
 * A success that is more than a plain `200` JSON body: another status, extra headers, or a JSON array streamed item
 * by item so that memory stays bounded however long the array is.
 */

const encoder = new TextEncoder();

/** Items of a streamed JSON array are written in pieces of about this many bytes. */
const STREAM_PIECE_BYTES = 64 * 1024;

/** What an action answers when a bare JSON value is not enough. */
export class ActionReply {
  readonly #body: () => BodyInit;
  readonly #init: ResponseInit;

  private constructor(body: () => BodyInit, init: ResponseInit) {
    this.#body = body;
    this.#init = init;
  }

  /** A JSON value with a status and headers of its own. */
  static json(value: unknown, init: ResponseInit = {}): ActionReply {
    return new ActionReply(() => JSON.stringify(value), init);
  }

  /** A JSON array whose items are read and written one by one as the client reads. */
  static jsonArray(items: AsyncIterable<unknown>, init: ResponseInit = {}): ActionReply {
    return new ActionReply(() => ReadableStream.from(jsonArrayPieces(items)), init);
  }

  /** The HTTP response. */
  toResponse(): Response {
    const headers = new Headers(this.#init.headers);
    headers.set("content-type", "application/json");
    return new Response(this.#body(), { ...this.#init, headers });
  }
}

async function* jsonArrayPieces(items: AsyncIterable<unknown>): AsyncGenerator<Uint8Array> {
  let piece = "[";
  let first = true;
  for await (const item of items) {
    piece += (first ? "" : ",") + JSON.stringify(item);
    first = false;
    if (piece.length >= STREAM_PIECE_BYTES) {
      yield encoder.encode(piece);
      piece = "";
    }
  }
  yield encoder.encode(piece + "]");
}
