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
    : ReadableStream.from("items" in reply ? jsonArrayPieces(reply.items) : jsonLinePieces(reply.lines));
  return new Response(body, { status: result.status, headers });
}

async function* jsonLinePieces(lines: AsyncIterable<unknown>): AsyncGenerator<Uint8Array> {
  let piece = "";
  for await (const line of lines) {
    piece += JSON.stringify(line) + "\n";
    if (piece.length >= STREAM_PIECE_BYTES) {
      yield encoder.encode(piece);
      piece = "";
    }
  }
  if (piece !== "") yield encoder.encode(piece);
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
