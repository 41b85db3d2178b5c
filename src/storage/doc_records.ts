/**
 * How a document lives in Deno KV: part 0 (the head) holds its content hash, vector, metadata and the first piece of
 * its text; long texts continue in parts 1..n-1, so that no value passes the 64 KiB limit.
 */
import { docPartKey, docsPrefix } from "./kv_keys.ts";
import { readInGroups } from "./kv_batches.ts";

/** A document as stored: its content, the hash of its text and its embedding. */
export interface StoredDoc {
  text: string;
  metadata?: Record<string, unknown>;
  hash: string;
  vector: Float32Array;
}

/** The head part of a stored document. */
export interface DocHead {
  hash: string;
  parts: number;
  vector: Uint8Array;
  metadata?: string;
  text: string;
}

/** A change to one document: its new content, or `null` to delete it, and how many parts it had before. */
export interface DocChange {
  id: string;
  doc: StoredDoc | null;
  previousParts: number;
}

/** Characters of text per part; a UTF-16 piece of this length stays far below the value limit. */
const TEXT_PIECE_CHARS = 8192;

/** Builds the KV mutations that apply one change. */
export function changeMutations(indexId: string, change: DocChange): Deno.KvMutation[] {
  const mutations: Deno.KvMutation[] = [];
  let parts = 0;
  if (change.doc !== null) {
    const values = docParts(change.doc);
    parts = values.length;
    values.forEach((value, part) => mutations.push({ type: "set", key: docPartKey(indexId, change.id, part), value }));
  }
  for (let part = parts; part < change.previousParts; part++) {
    mutations.push({ type: "delete", key: docPartKey(indexId, change.id, part) });
  }
  return mutations;
}

function docParts(doc: StoredDoc): unknown[] {
  const pieces: string[] = [];
  for (let offset = 0; offset === 0 || offset < doc.text.length; offset += TEXT_PIECE_CHARS) {
    pieces.push(doc.text.slice(offset, offset + TEXT_PIECE_CHARS));
  }
  const head: DocHead = {
    hash: doc.hash,
    parts: pieces.length,
    vector: new Uint8Array(
      doc.vector.buffer.slice(doc.vector.byteOffset, doc.vector.byteOffset + doc.vector.byteLength),
    ),
    text: pieces[0]!,
  };
  if (doc.metadata !== undefined) head.metadata = JSON.stringify(doc.metadata);
  return [head, ...pieces.slice(1)];
}

/** Reads the heads of the given documents; missing documents are absent from the map. */
export async function readDocHeads(kv: Deno.Kv, indexId: string, ids: string[]): Promise<Map<string, DocHead>> {
  const heads = new Map<string, DocHead>();
  await readInGroups<DocHead>(kv, ids.map((id) => docPartKey(indexId, id, 0)), (entries, first) => {
    entries.forEach((entry, i) => {
      if (entry.value !== null) heads.set(ids[first + i]!, entry.value);
    });
  });
  return heads;
}

/** Reads whole documents by id, in the order asked; missing ids are skipped. */
export async function readDocs(kv: Deno.Kv, indexId: string, ids: string[]): Promise<[string, StoredDoc][]> {
  const heads = await readDocHeads(kv, indexId, ids);
  const docs: [string, StoredDoc][] = [];
  for (const id of ids) {
    const head = heads.get(id);
    if (head === undefined) continue;
    const rest: string[] = [];
    for (let part = 1; part < head.parts; part++) {
      const entry = await kv.get<string>(docPartKey(indexId, id, part));
      rest.push(entry.value ?? "");
    }
    docs.push([id, assembleDoc(head, rest)]);
  }
  return docs;
}

/** Streams the documents of an index in id order: all, or those whose id sorts after `after`. */
export async function* listDocs(kv: Deno.Kv, indexId: string, after?: string): AsyncGenerator<[string, StoredDoc]> {
  let id: string | undefined;
  let head: DocHead | undefined;
  let rest: string[] = [];
  // "\0" is the least suffix, so ids after `after` (and none of its parts) sort from there on.
  const selector = after === undefined
    ? { prefix: docsPrefix(indexId) }
    : { prefix: docsPrefix(indexId), start: [...docsPrefix(indexId), `${after}\0`] };
  for await (const entry of kv.list<DocHead | string>(selector, { batchSize: 500 })) {
    const entryId = entry.key[2] as string;
    if (entry.key[3] === 0) {
      if (id !== undefined && head !== undefined) yield [id, assembleDoc(head, rest)];
      id = entryId;
      head = entry.value as DocHead;
      rest = [];
    } else if (entryId === id) {
      rest.push(entry.value as string);
    }
  }
  if (id !== undefined && head !== undefined) yield [id, assembleDoc(head, rest)];
}

function assembleDoc(head: DocHead, rest: string[]): StoredDoc {
  const doc: StoredDoc = {
    text: head.text + rest.join(""),
    hash: head.hash,
    vector: vectorOf(head),
  };
  if (head.metadata !== undefined) doc.metadata = JSON.parse(head.metadata);
  return doc;
}

/** The float32 vector of a stored head. */
export function vectorOf(head: DocHead): Float32Array {
  const bytes = head.vector;
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}
