/**
 * A compact binary encoding of documents and document changes, used for document records, staged writes, the change
 * log and export. A document is `{text, metadata?}` as UTF-8 JSON, then its passages: their spans as uint32 pairs and
 * their vectors as float32 (little-endian), each stored once, never as JSON numbers. A change is the document id, how
 * many record parts the document had before, and the document, or nothing for a deletion.
 */
import { ByteReader, ByteWriter } from "../util/byte_codec.ts";
import type { IndexedDoc } from "../search/indexed_doc.ts";

/** A document as stored: the shape the search index takes. */
export type StoredDoc = IndexedDoc;

/** A change to one document: its new content, or `null` to delete it, and how many parts it had before. */
export interface DocChange {
  id: string;
  doc: StoredDoc | null;
  previousParts: number;
}

/** The `present` byte of a change that carries a document; 1 was a single-vector format that is no longer written. */
const WITH_DOC = 2;

/** Encodes changes into one byte array. */
export function encodeDocChanges(changes: Iterable<DocChange>): Uint8Array {
  const out = new ByteWriter();
  for (const change of changes) {
    out.string(change.id);
    out.u32(change.previousParts);
    out.u8(change.doc === null ? 0 : WITH_DOC);
    if (change.doc !== null) writeStoredDoc(out, change.doc);
  }
  // A copy of its own: a view would carry the writer's whole buffer into any KV value it is stored in.
  return out.bytes().slice();
}

/** Decodes what {@link encodeDocChanges} wrote. */
export function decodeDocChanges(bytes: Uint8Array): DocChange[] {
  const input = new ByteReader(bytes);
  const changes: DocChange[] = [];
  while (!input.done) {
    const id = input.string();
    const previousParts = input.u32();
    const present = input.u8();
    if (present !== 0 && present !== WITH_DOC) throw new Error(`Unknown document change format ${present}`);
    changes.push({ id, doc: present === 0 ? null : readStoredDoc(input), previousParts });
  }
  return changes;
}

/** Encodes one document on its own. */
export function encodeStoredDoc(doc: StoredDoc): Uint8Array {
  const out = new ByteWriter();
  writeStoredDoc(out, doc);
  return out.bytes().slice();
}

/** Decodes what {@link encodeStoredDoc} wrote. */
export function decodeStoredDoc(bytes: Uint8Array): StoredDoc {
  return readStoredDoc(new ByteReader(bytes));
}

/** Writes a document: its content as JSON, then its passages' spans and vectors. */
export function writeStoredDoc(out: ByteWriter, doc: StoredDoc): void {
  out.string(
    JSON.stringify(doc.metadata === undefined ? { text: doc.text } : { text: doc.text, metadata: doc.metadata }),
  );
  out.words(Uint32Array.from(doc.passages.flatMap(({ start, end }) => [start, end])));
  for (const passage of doc.passages) out.words(passage.vector);
}

/** Reads what {@link writeStoredDoc} wrote; vectors are copies, so that they keep no larger buffer alive. */
export function readStoredDoc(input: ByteReader): StoredDoc {
  const content: { text: string; metadata?: Record<string, unknown> } = JSON.parse(input.string());
  const spans = input.uints();
  const passages = [];
  for (let i = 0; i < spans.length; i += 2) {
    passages.push({ start: spans[i]!, end: spans[i + 1]!, vector: input.floats().slice() });
  }
  return { ...content, passages };
}
