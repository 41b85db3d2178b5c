/**
 * A success that is more than a plain JSON body: another status, extra headers, or a JSON array produced item by item
 * so that memory stays bounded however long the array is. Transport-neutral: `src/http/` turns it into a response.
 */

/** What an action answers when a bare JSON value is not enough. */
export class ActionReply {
  /** The HTTP status of the success. */
  readonly status: number;
  /** Headers beside the content type. */
  readonly headers: Readonly<Record<string, string>>;
  /** The JSON value, or the items of a JSON array to write one by one as the client reads. */
  readonly body: { value: unknown } | { items: AsyncIterable<unknown> } | { lines: AsyncIterable<unknown> };

  private constructor(body: ActionReply["body"], init: ReplyInit) {
    this.body = body;
    this.status = init.status ?? 200;
    this.headers = init.headers ?? {};
  }

  /** A JSON value with a status and headers of its own. */
  static json(value: unknown, init: ReplyInit = {}): ActionReply {
    return new ActionReply({ value }, init);
  }

  /** A JSON array whose items are read and written one by one as the client reads. */
  static jsonArray(items: AsyncIterable<unknown>, init: ReplyInit = {}): ActionReply {
    return new ActionReply({ items }, init);
  }

  /** JSON Lines (`application/x-ndjson`), one value per line, read and written one by one as the client reads. */
  static jsonLines(lines: AsyncIterable<unknown>, init: ReplyInit = {}): ActionReply {
    return new ActionReply({ lines }, init);
  }
}

/** The status and headers of an {@link ActionReply}. */
export interface ReplyInit {
  status?: number;
  headers?: Record<string, string>;
}
