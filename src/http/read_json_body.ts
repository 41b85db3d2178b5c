/** Reads a request body as a JSON object, never buffering more than the limit. */
import { ApiError } from "../api/api_error.ts";
import { concatBytes } from "../util/concat_bytes.ts";
import { bodyChunks, type BodyTimeouts } from "./body_chunks.ts";

const decoder = new TextDecoder("utf-8", { fatal: true });

/** How a body is read: its size and its deadlines. */
export interface BodyLimits extends BodyTimeouts {
  maxBytes: number;
}

/**
 * Reads and parses the body: 413 past `maxBytes`, 408 when it keeps the server waiting too long, 400 for a body cut
 * short or malformed, bad UTF-8, bad JSON, or JSON that is not an object.
 */
export async function readJsonObject(request: Request, limits: BodyLimits): Promise<Record<string, unknown>> {
  const { maxBytes } = limits;
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) throw tooLarge(maxBytes);
  let chunks: Uint8Array[];
  try {
    chunks = await readBody(request, limits);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    // The connection ended before the body did, or the body broke HTTP's framing.
    throw new ApiError(400, "Request body could not be read: it ended early or was malformed", { cause: error });
  }
  let text: string;
  try {
    text = decoder.decode(chunks.length === 1 ? chunks[0] : concatBytes(chunks));
  } catch {
    throw new ApiError(400, "Request body is not valid UTF-8");
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ApiError(400, `Request body is not valid JSON: ${(error as SyntaxError).message}`);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new ApiError(400, "Request body must be a JSON object");
  }
  return json as Record<string, unknown>;
}

/** The body's bytes, chunk by chunk up to the limit. */
async function readBody(request: Request, limits: BodyLimits): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  if (request.body === null) return chunks;
  let total = 0;
  for await (const chunk of bodyChunks(request.body, limits)) {
    total += chunk.byteLength;
    if (total > limits.maxBytes) throw tooLarge(limits.maxBytes);
    chunks.push(chunk);
  }
  return chunks;
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError(413, `Request body is larger than the limit of ${maxBytes} bytes`);
}
