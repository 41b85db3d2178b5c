/**
 * Copies one index into a backup file: its document parts, then its settings and its record, at one revision. A copy that the index
 * outran (it moved to another id, or the change log no longer covers the writes) is made again, a few times at most.
 */
import { copyIndexDocs, type IndexSource, type StoredEntry } from "../storage/backup_source.ts";
import type { IndexRecord } from "../storage/index_records.ts";
import { JsonLinesGzipWriter, readJsonLinesGzip, type WrittenFile } from "./jsonl_gz_file.ts";
import { type Json, toKvJson } from "./kv_json.ts";
import { settingsEntries } from "../storage/settings_records.ts";

/** Copies of one index before the backup fails: each is made again only when writes outran the one before. */
const COPY_ATTEMPTS = 5;

/** The error of a job that was queued but unfinished when the backup was taken: its documents are not in it. */
export const UNFINISHED_JOB_ERROR =
  "The queued write had not finished when the backup was taken; its documents are not in the backup";

/** One line of a backup file: a stored key and its value. */
export interface BackupLine {
  k: Json;
  v: Json;
}

/** The line of a stored entry. */
export function lineOf(entry: StoredEntry): BackupLine {
  return { k: toKvJson(entry.key), v: toKvJson(entry.value) };
}

/** An index as copied. */
export interface CopiedIndex {
  record: IndexRecord;
  docs: number;
  file: WrittenFile;
}

/** Options of {@link copyIndex}. */
export interface CopyOptions {
  signal?: AbortSignal | undefined;
  pace?: (() => Promise<void>) | undefined;
}

/** Writes the index at `source` to a new file at `path`; null when the index went away meanwhile (the file too). */
export async function copyIndex(
  kv: Deno.Kv,
  source: IndexSource,
  path: string,
  options: CopyOptions = {},
): Promise<CopiedIndex | null> {
  let last: IndexRecord | undefined;
  for (let attempt = 0; attempt < COPY_ATTEMPTS; attempt++) {
    const writer = await JsonLinesGzipWriter.create(path);
    let docs = 0;
    let copy;
    try {
      copy = await copyIndexDocs(kv, source, async (entries) => {
        options.signal?.throwIfAborted();
        for (const entry of entries) {
          if (entry.key[3] === 0) docs++;
          await writer.write(lineOf(entry));
        }
      }, options.pace);
    } catch (error) {
      await writer.abort();
      throw error;
    }
    if (copy.kind !== "copied") {
      await writer.abort();
      if (copy.kind === "gone") {
        await Deno.remove(path);
        return null;
      }
      continue;
    }
    const version = copy.record.settings;
    const settings = version === undefined ? [] : await settingsEntries(kv, copy.record.id, version);
    // A version that a change replaced since the record was read: copy again.
    if (settings === null) {
      await writer.abort();
      continue;
    }
    const settled = settledRecord(copy.record);
    const recordLine = lineOf({
      key: copy.entry.key,
      // A record kept for undo is one field of the value stored; a live one is the whole value.
      value: copy.entry.value === copy.record ? settled : { ...copy.entry.value as object, record: settled },
    });
    let file: WrittenFile;
    const lastLines = [...settings.map(lineOf), recordLine];
    if (copy.replaced.size === 0) {
      for (const line of lastLines) await writer.write(line);
      file = await writer.close();
    } else {
      await writer.close();
      ({ file, docs } = await replaceDocs(path, copy.replaced, lastLines));
    }
    last = copy.record;
    // Every document is one part 0; a count that differs means the copy is not whole: make it again.
    if (docs === copy.record.docCount) return { record: settled, docs, file };
  }
  const name = last === undefined ? "" : ` "${last.name}" of project "${last.projectId}"`;
  throw new Error(`Cannot copy index${name} consistently: writes outran ${COPY_ATTEMPTS} copies of it`);
}

/**
 * The record as the copy shows it: its documents all written (no pending batch), and a queued job that was still
 * running marked failed, since its staged documents stay out of a backup.
 */
function settledRecord(record: IndexRecord): IndexRecord {
  const { pending: _, ...settled } = record;
  if (settled.job?.state === "running") {
    const { owner: _owner, leaseUntil: _until, ...job } = settled.job;
    settled.job = { ...job, state: "failed", error: UNFINISHED_JOB_ERROR };
  }
  return settled;
}

/**
 * Rewrites the file at `path` with the parts of `replaced` documents in place of those copied, then `lastLines` (the
 * settings and the record).
 */
async function replaceDocs(
  path: string,
  replaced: Map<string, StoredEntry[]>,
  lastLines: BackupLine[],
): Promise<{ file: WrittenFile; docs: number }> {
  const next = `${path}.next`;
  const writer = await JsonLinesGzipWriter.create(next);
  let docs = 0;
  try {
    for await (const line of readJsonLinesGzip(path)) {
      // Document keys are ["docs", indexId, docId, part], all plain JSON.
      const key = (line as BackupLine).k as [string, string, string, number];
      if (replaced.has(key[2])) continue;
      if (key[3] === 0) docs++;
      await writer.write(line);
    }
    for (const parts of replaced.values()) {
      for (const entry of parts) {
        if (entry.key[3] === 0) docs++;
        await writer.write(lineOf(entry));
      }
    }
    for (const line of lastLines) await writer.write(line);
  } catch (error) {
    await writer.abort();
    throw error;
  }
  const file = await writer.close();
  await Deno.rename(next, path);
  return { file, docs };
}
