/**
 * The export format of an index, JSON Lines: a header line with the index's settings, then one line per document
 * with its id, text, metadata and passages, each passage's vector as base64 of its float32 values (little-endian).
 */
import type { PassageSettings } from "../passages/passage_settings.ts";
import type { StoredDoc } from "../storage/doc_change_codec.ts";
import type { IndexSettings } from "../api/settings_schemas.ts";
import { encodeVector } from "../util/vector_base64.ts";

/** The first line of an export. */
export interface ExportHeader {
  quire: "index";
  format: 1;
  name: string;
  model: { id: string; version: string };
  passages?: PassageSettings;
  language: string;
  docCount: number;
  passageCount: number;
  /** Synonyms and pins, when the index has any. */
  settings?: IndexSettings;
  exportedAt: string;
}

/** A document line. */
export interface ExportedDoc {
  id: string;
  text: string;
  metadata?: Record<string, unknown>;
  passages: { start: number; end: number; vector: string }[];
}

/** Whether a line is an export header, which starts each index of a project export. */
export function isExportHeader(value: unknown): value is ExportHeader {
  return typeof value === "object" && value !== null && (value as { quire?: unknown }).quire === "index";
}

/** A stored document as its export line. */
export function exportedDoc(id: string, doc: StoredDoc): ExportedDoc {
  const line: ExportedDoc = { id, text: doc.text, passages: [] };
  if (doc.metadata !== undefined) line.metadata = doc.metadata;
  line.passages = doc.passages.map(({ start, end, vector }) => ({ start, end, vector: encodeVector(vector) }));
  return line;
}
