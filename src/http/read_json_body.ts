/** Reads a request body as a JSON object, never buffering more than the limit. */
import { ApiError } from "./api_error.ts";
import { concatBytes } from "../concat_bytes.ts";

const decoder = new TextDecoder("utf-8", { fatal: true });

/** Reads and parses the body: 413 past `maxBytes`, 400 for bad UTF-8, bad JSON, or JSON that is not an object. */
export async function readJsonObject(request: Request, maxBytes: number): Promise<Record<string, unknown>> {
  const tooLarge = () => new ApiError(413, `Request body is larger than the limit of ${maxBytes} bytes`);
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) throw tooLarge();
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (declared <= maxBytes) {
    // The server holds a body to its declared length, so it can be read whole.
    chunks.push(new Uint8Array(await request.arrayBuffer()));
  } else if (request.body !== null) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel();
        throw tooLarge();
      }
      chunks.push(value);
    }
  }
  let text: string;
  try {
    text = decoder.decode(concatBytes(chunks));
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
