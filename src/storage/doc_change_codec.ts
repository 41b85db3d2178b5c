/**
 * A compact binary encoding of document changes, used for staged writes and for index snapshots. Each entry is
 * `u32 idLength, id (UTF-8), u32 previousParts, u8 present`, and when present
 * `u32 jsonLength, {text, metadata?, hash} (UTF-8 JSON), u32 dims, dims × float32 (little-endian)`.
 * Vectors are stored once, as float32, never as JSON numbers.
 */
import type { DocChange, StoredDoc } from "./doc_records.ts";
import { concatBytes } from "../util/concat_bytes.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Encodes changes into one byte array. */
export function encodeDocChanges(changes: Iterable<DocChange>): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const change of changes) {
    const id = encoder.encode(change.id);
    const json = change.doc === null ? undefined : encoder.encode(JSON.stringify(contentOf(change.doc)));
    const dims = change.doc?.vector.length ?? 0;
    const size = 4 + id.byteLength + 4 + 1 + (json === undefined ? 0 : 4 + json.byteLength + 4 + dims * 4);
    const bytes = new Uint8Array(size);
    const view = new DataView(bytes.buffer);
    let offset = 0;
    view.setUint32(offset, id.byteLength, true);
    bytes.set(id, offset += 4);
    view.setUint32(offset += id.byteLength, change.previousParts, true);
    view.setUint8(offset += 4, json === undefined ? 0 : 1);
    offset += 1;
    if (json !== undefined && change.doc !== null) {
      view.setUint32(offset, json.byteLength, true);
      bytes.set(json, offset += 4);
      view.setUint32(offset += json.byteLength, dims, true);
      offset += 4;
      const vector = change.doc.vector;
      bytes.set(new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength), offset);
      offset += vector.byteLength;
    }
    parts.push(bytes);
  }
  return concatBytes(parts);
}

/** Decodes what {@link encodeDocChanges} wrote. */
export function decodeDocChanges(bytes: Uint8Array): DocChange[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const changes: DocChange[] = [];
  let offset = 0;
  while (offset < bytes.byteLength) {
    const idLength = view.getUint32(offset, true);
    const id = decoder.decode(bytes.subarray(offset += 4, offset += idLength));
    const previousParts = view.getUint32(offset, true);
    const present = view.getUint8(offset += 4);
    offset += 1;
    let doc: StoredDoc | null = null;
    if (present === 1) {
      const jsonLength = view.getUint32(offset, true);
      const content = JSON.parse(decoder.decode(bytes.subarray(offset += 4, offset += jsonLength)));
      const dims = view.getUint32(offset, true);
      offset += 4;
      // One copy of the bytes, viewed as float32 (little-endian, as every platform Deno runs on).
      const vector = new Float32Array(bytes.slice(offset, offset + dims * 4).buffer);
      offset += dims * 4;
      doc = { ...content, vector };
    }
    changes.push({ id, doc, previousParts });
  }
  return changes;
}

function contentOf(doc: StoredDoc): Omit<StoredDoc, "vector"> {
  return doc.metadata === undefined
    ? { text: doc.text, hash: doc.hash }
    : { text: doc.text, metadata: doc.metadata, hash: doc.hash };
}
