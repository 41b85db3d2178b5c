/**
 * How a document lives in Deno KV: its encoding (`doc_change_codec.ts`: text, metadata, passages and their vectors) in
 * parts of at most 60 KiB, so that no value passes the 64 KiB limit. Part 0, the head, also says how many parts and
 * passages there are.
 */
import { docPartKey, docsPrefix } from "./kv_keys.ts";
import { byteChunks, readInGroups } from "./kv_batches.ts";
import { decodeStoredDoc, type DocChange, encodeStoredDoc, type StoredDoc } from "./doc_change_codec.ts";
import { concatBytes } from "../util/concat_bytes.ts";

/** How many passages `docs` have together. */
export function passageTotal(docs: StoredDoc[]): number {
  return docs.reduce((sum, doc) => sum + doc.passages.length, 0);
}

/** The head part of a stored document. */
export type DocHead = CurrentHead | LegacyHead;

interface CurrentHead {
  parts: number;
  passages: number;
  body: Uint8Array;
}

/** A head written before passages: one vector for the whole text, and the text in parts 1..n-1. */
interface LegacyHead {
  hash: string;
  parts: number;
  vector: Uint8Array;
  metadata?: string;
  text: string;
}

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
  // Never empty: the encoding opens with the length of the content.
  const pieces = byteChunks(encodeStoredDoc(doc));
  const head: CurrentHead = { parts: pieces.length, passages: doc.passages.length, body: pieces[0]! };
  return [head, ...pieces.slice(1)];
}

/** How many passages a stored document has. */
export function passageCountOf(head: DocHead): number {
  return "passages" in head ? head.passages : 1;
}

/**
 * `getMany` calls in flight while the heads of a write's documents are read: 1,000 heads are 100 calls of 10 keys, and
 * the store answers several at once.
 */
const PARALLEL_HEAD_READS = 8;

/** Reads the heads of the given documents; missing documents are absent from the map. */
export async function readDocHeads(kv: Deno.Kv, indexId: string, ids: string[]): Promise<Map<string, DocHead>> {
  const heads = new Map<string, DocHead>();
  await readInGroups<DocHead>(kv, ids.map((id) => docPartKey(indexId, id, 0)), (entries, first) => {
    entries.forEach((entry, i) => {
      if (entry.value !== null) heads.set(ids[first + i]!, entry.value);
    });
  }, PARALLEL_HEAD_READS);
  return heads;
}

/** Reads whole documents by id, in the order asked; missing ids are skipped. */
export async function readDocs(kv: Deno.Kv, indexId: string, ids: string[]): Promise<[string, StoredDoc][]> {
  const heads = await readDocHeads(kv, indexId, ids);
  const docs: [string, StoredDoc][] = [];
  for (const id of ids) {
    const head = heads.get(id);
    if (head === undefined) continue;
    const rest: (string | Uint8Array)[] = [];
    for (let part = 1; part < head.parts; part++) {
      const entry = await kv.get<string | Uint8Array>(docPartKey(indexId, id, part));
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
  let rest: (string | Uint8Array)[] = [];
  // "\0" is the least suffix, so ids after `after` (and none of its parts) sort from there on.
  const selector = after === undefined
    ? { prefix: docsPrefix(indexId) }
    : { prefix: docsPrefix(indexId), start: [...docsPrefix(indexId), `${after}\0`] };
  for await (const entry of kv.list<DocHead | string | Uint8Array>(selector, { batchSize: 500 })) {
    const entryId = entry.key[2] as string;
    if (entry.key[3] === 0) {
      if (id !== undefined && head !== undefined) yield [id, assembleDoc(head, rest)];
      id = entryId;
      head = entry.value as DocHead;
      rest = [];
    } else if (entryId === id) {
      rest.push(entry.value as string | Uint8Array);
    }
  }
  if (id !== undefined && head !== undefined) yield [id, assembleDoc(head, rest)];
}

function assembleDoc(head: DocHead, rest: (string | Uint8Array)[]): StoredDoc {
  if ("body" in head) return decodeStoredDoc(concatBytes([head.body, ...rest as Uint8Array[]]));
  const text = head.text + rest.join("");
  const bytes = head.vector;
  const vector = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const doc: StoredDoc = { text, passages: [{ start: 0, end: text.length, vector }] };
  if (head.metadata !== undefined) doc.metadata = JSON.parse(head.metadata);
  return doc;
}
