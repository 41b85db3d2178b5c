/** Turns what an action returned into the HTTP response: JSON, with a streamed array where the action asked for one. */
import { ActionReply } from "../api/action_reply.ts";

const encoder = new TextEncoder();

/** Items of a streamed JSON array are written in pieces of about this many bytes. */
const STREAM_PIECE_BYTES = 64 * 1024;

/** The response of an action's result: a plain value as a 200 JSON body, an {@link ActionReply} as it says. */
export function replyResponse(result: unknown): Response {
  if (!(result instanceof ActionReply)) return Response.json(result);
  const headers = new Headers(result.headers);
  const reply = result.body;
  headers.set("content-type", "lines" in reply ? "application/x-ndjson" : "application/json");
  const body = "value" in reply
    ? JSON.stringify(reply.value)
    : ReadableStream.from(pieces("items" in reply ? jsonArrayTexts(reply.items) : jsonLineTexts(reply.lines)));
  return new Response(body, { status: result.status, headers });
}

/** JSON text in pieces of about {@link STREAM_PIECE_BYTES}, so that a long body is neither one write nor thousands. */
async function* pieces(texts: AsyncIterable<string>): AsyncGenerator<Uint8Array> {
  let piece = "";
  for await (const text of texts) {
    piece += text;
    if (piece.length >= STREAM_PIECE_BYTES) {
      yield encoder.encode(piece);
      piece = "";
    }
  }
  if (piece !== "") yield encoder.encode(piece);
}

async function* jsonArrayTexts(items: AsyncIterable<unknown>): AsyncGenerator<string> {
  yield "[";
  let first = true;
  for await (const item of items) {
    yield (first ? "" : ",") + JSON.stringify(item);
    first = false;
  }
  yield "]";
}

async function* jsonLineTexts(lines: AsyncIterable<unknown>): AsyncGenerator<string> {
  for await (const line of lines) yield JSON.stringify(line) + "\n";
}
