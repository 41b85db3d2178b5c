/** Turns input documents into stored ones, embedding only texts whose vector is not already known. */
import type { ServiceContext } from "../context.ts";
import type { DocInput } from "../api/request_schemas.ts";
import type { StoredDoc } from "../storage/doc_records.ts";
import { sha256Hex } from "../util/sha256_hex.ts";
import { embedTexts } from "./embed_texts.ts";

/**
 * Builds stored documents for `docs`. Vectors come from `known` (by the SHA-256 of the text) where possible; the other texts are
 * embedded once each, and their vectors are added to `known`.
 */
export async function toStoredDocs(
  ctx: ServiceContext,
  modelId: string,
  docs: DocInput[],
  known: Map<string, Float32Array>,
): Promise<StoredDoc[]> {
  const hashes = docs.map((doc) => sha256Hex(doc.text));
  const missing = new Map<string, string>();
  docs.forEach((doc, i) => {
    if (!known.has(hashes[i]!)) missing.set(hashes[i]!, doc.text);
  });
  if (missing.size > 0) {
    const vectors = await embedTexts(ctx, { modelId, texts: [...missing.values()] });
    [...missing.keys()].forEach((hash, i) => known.set(hash, vectors[i]!));
  }
  return docs.map((doc, i) => {
    const stored: StoredDoc = { text: doc.text, hash: hashes[i]!, vector: known.get(hashes[i]!)! };
    if (doc.metadata !== undefined) stored.metadata = doc.metadata;
    return stored;
  });
}
