/**
 * Writes one backup of the store into a backup directory: the durable records as they are, each index (with its
 * documents) at one revision, and the manifest, into a `.tmp-` directory that is flushed to disk and then renamed to
 * the backup's final name, so that a backup under its final name is always whole. Its directories and files are
 * readable by their owner only (see private_files.ts). The oldest beyond the number to keep are deleted afterwards.
 */
import { type IndexSource, listBackedUpRecords, listIndexSources, readStoreFormat } from "../storage/backup_source.ts";
import { newTimedId } from "../storage/timed_id.ts";
import { type BackupFile, type BackupManifest, buildManifest, MANIFEST_FILE } from "./backup_manifest.ts";
import { backupName, pruneBackups, removeTemporaryDirs, syncDirectory, TEMPORARY_PREFIX } from "./backup_directory.ts";
import { JsonLinesGzipWriter } from "./jsonl_gz_file.ts";
import { copyIndex, lineOf } from "./index_copy.ts";
import { createPrivateFile, makePrivateDirectory } from "./private_files.ts";

/** The file of the records copied as they are (projects, keys, aliases, webhook secrets). */
export const RECORDS_FILE = "records.jsonl.gz";

/** Options of {@link writeBackup}. */
export interface BackupOptions {
  /** How many backups to keep in the directory, this one included. */
  keep: number;
  /** When the backup begins, which names it; now by default. */
  now?: Date;
  /** Stops the backup, which then deletes what it wrote. */
  signal?: AbortSignal | undefined;
  /** Awaited after each batch of reads, e.g. to give requests room. */
  pace?: (() => Promise<void>) | undefined;
  /** Hears how far the copy is, e.g. for a progress line. */
  onProgress?: ((message: string) => void) | undefined;
}

/** A backup written whole. */
export interface WrittenBackup {
  name: string;
  /** Its directory: `dir` and its name. */
  path: string;
  manifest: BackupManifest;
}

/**
 * Writes one backup of the store into `dir` (created if missing, readable by its owner only); its temporary directory
 * goes if it fails.
 */
export async function writeBackup(kv: Deno.Kv, dir: string, options: BackupOptions): Promise<WrittenBackup> {
  const startedAt = options.now ?? new Date();
  const { signal } = options;
  await makePrivateDirectory(dir);
  const temporaryName = `${TEMPORARY_PREFIX}${newTimedId()}`;
  // Only the holder of the backup lease writes, so any other temporary directory was left by a writer that died.
  await removeTemporaryDirs(dir, temporaryName);
  const temporary = `${dir}/${temporaryName}`;
  await makePrivateDirectory(temporary);
  await makePrivateDirectory(`${temporary}/indexes`);
  let name: string;
  let manifest: BackupManifest;
  try {
    // A store without a marker holds records of format 1, the format before markers.
    const storeFormat = await readStoreFormat(kv) ?? 1;
    const counts: Record<string, number> = {};
    const count = (kind: string, by = 1) => counts[kind] = (counts[kind] ?? 0) + by;
    const files: BackupFile[] = [];
    const sources: IndexSource[] = [];
    const records = await JsonLinesGzipWriter.create(`${temporary}/${RECORDS_FILE}`);
    try {
      for await (const entry of listBackedUpRecords(kv)) {
        signal?.throwIfAborted();
        await records.write(lineOf(entry));
        count(String(entry.key[0]));
      }
      for await (const source of listIndexSources(kv)) {
        if ("recordOf" in source) {
          sources.push(source);
        } else {
          await records.write(lineOf(source));
          count(String(source.key[0]));
        }
      }
    } catch (error) {
      await records.abort();
      throw error;
    }
    const written = await records.close();
    files.push({ path: RECORDS_FILE, bytes: written.bytes, sha256: written.sha256, entries: written.lines });
    count("indexes", 0);
    count("documents", 0);
    for (const [i, source] of sources.entries()) {
      signal?.throwIfAborted();
      const path = `indexes/${String(i + 1).padStart(6, "0")}.jsonl.gz`;
      const copied = await copyIndex(kv, source, `${temporary}/${path}`, { signal, pace: options.pace });
      if (copied === null) continue;
      const { record, docs, file } = copied;
      const deleted = source.key[0] !== "indexes";
      files.push({
        path,
        bytes: file.bytes,
        sha256: file.sha256,
        entries: file.lines,
        index: { projectId: record.projectId, name: record.name, id: record.id, docs, deleted },
      });
      count(deleted ? String(source.key[0]) : "indexes");
      count("documents", docs);
      options.onProgress?.(`copied ${i + 1}/${sources.length} indexes`);
    }
    manifest = buildManifest(startedAt, { storeFormat, counts, files });
    await writeSynced(`${temporary}/${MANIFEST_FILE}`, `${JSON.stringify(manifest, null, 2)}\n`);
    await syncDirectory(`${temporary}/indexes`);
    await syncDirectory(temporary);
    signal?.throwIfAborted();
    name = backupName(startedAt);
    await Deno.rename(temporary, `${dir}/${name}`);
    await syncDirectory(dir);
  } catch (error) {
    await Deno.remove(temporary, { recursive: true }).catch(() => {});
    throw error;
  }
  try {
    await pruneBackups(dir, options.keep);
  } catch (error) {
    throw new Error(`Backup "${name}" was written, but deleting the oldest failed: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return { name, path: `${dir}/${name}`, manifest };
}

async function writeSynced(path: string, text: string): Promise<void> {
  const bytes = new TextEncoder().encode(text);
  const file = await createPrivateFile(path);
  try {
    for (let at = 0; at < bytes.byteLength;) at += await file.write(bytes.subarray(at));
    await file.sync();
  } finally {
    file.close();
  }
}
