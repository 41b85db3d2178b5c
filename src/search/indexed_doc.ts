/**
 * The documents a search index takes and keeps: a document's text, metadata and passages as a write hands them in,
 * the change that replaces or removes one, and the content a hit shows. They are plain data, shared by the index, its
 * slot table and its snapshots, and by the writes and storage that produce them.
 */

/** A stretch of a document's text, in UTF-16 code units: `text.slice(start, end)`. */
export interface PassageSpan {
  start: number;
  end: number;
}

/** A passage of a document and its vector. */
export interface Passage extends PassageSpan {
  vector: Float32Array;
}

/** A document as the index takes it (and as storage keeps it): its text, metadata, and passages, which cover the text. */
export interface IndexedDoc {
  text: string;
  metadata?: Record<string, unknown>;
  passages: Passage[];
}

/** A change to one document: its new content, or `null` to remove it. */
export interface DocUpdate {
  id: string;
  doc: IndexedDoc | null;
}

/**
 * What a hit can show of its document. `spans` holds its passages' starts and ends in pairs; it is absent when the
 * document is one passage covering its whole text.
 */
export interface DocContent {
  text: string;
  metadata?: Record<string, unknown>;
  spans?: Uint32Array;
}

/** The spans of a document's passages, in order. */
export function passageSpansOf(content: DocContent): PassageSpan[] {
  const spans = content.spans;
  if (spans === undefined) return [{ start: 0, end: content.text.length }];
  return Array.from({ length: spans.length / 2 }, (_, i) => ({ start: spans[2 * i]!, end: spans[2 * i + 1]! }));
}
