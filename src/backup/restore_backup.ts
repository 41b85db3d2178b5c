/**
 * Restores a backup into an empty store: checks every file against the manifest first, refuses a store that holds any
 * project or index, then writes each index's documents under a build marker, the other records, each index's record,
 * and the projects last. A restore that dies before the index records leaves a store that a second try accepts.
 */
import { ApiError } from "../api/api_error.ts";
import type { StoredEntry } from "../storage/backup_source.ts";
import {
  publishRestoredIndex,
  startRestoredIndex,
  storeContents,
  writeRestoredEntries,
  writeStoreFormat,
} from "../storage/restore_target.ts";
import { type BackupFile, type BackupManifest, readManifest } from "./backup_manifest.ts";
import { fileChecksum, readJsonLinesGzip } from "./jsonl_gz_file.ts";
import type { BackupLine } from "./index_copy.ts";
import { fromKvJson } from "./kv_json.ts";

/** Entries per write: a few commits' worth, within Deno KV's limits per commit. */
const WRITE_BATCH = 500;

/** Options of {@link restoreBackup}. */
export interface RestoreOptions {
  /** Hears how far the restore is: what it does, and entries done of all. */
  onProgress?: (step: string, done: number, total: number) => void;
}

/**
 * Restores the backup in `dir` into `kv`, which must hold no project and no index; returns its manifest. A damaged
 * or unreadable backup is a 422, a missing one a 404, a store that is not empty a 409: each before anything is written.
 */
export async function restoreBackup(kv: Deno.Kv, dir: string, options: RestoreOptions = {}): Promise<BackupManifest> {
  const manifest = await readManifest(dir);
  const total = manifest.files.reduce((sum, file) => sum + file.entries, 0);
  let done = 0;
  const progress = (step: string, entries = 0) => options.onProgress?.(step, done += entries, total);
  for (const [i, file] of manifest.files.entries()) {
    progress(`checking file ${i + 1}/${manifest.files.length}`);
    await verifyFile(dir, file);
  }
  const contents = await storeContents(kv);
  if (contents !== null) {
    throw new ApiError(
      409,
      `Cannot restore into a store that is not empty: it holds ${contents}; restore into a new store (a DENO_KV_PATH ` +
        `that does not exist yet)`,
    );
  }
  // The records are of the backup's format: a start brings them forward from there, as it would the store's.
  await writeStoreFormat(kv, manifest.storeFormat);
  const records: [string, StoredEntry][] = [];
  const indexFiles = manifest.files.filter((file) => file.index !== undefined);
  for (const [i, file] of indexFiles.entries()) {
    const { id, docs } = file.index!;
    await startRestoredIndex(kv, id);
    let batch: StoredEntry[] = [];
    let restoredDocs = 0;
    let record: StoredEntry | undefined;
    for await (const entry of entriesOf(dir, file)) {
      // Each file holds the index's document parts and settings chunks (under its id), then its record.
      if (entry.key[0] !== "docs" && entry.key[0] !== "index_settings") {
        record = entry;
        continue;
      }
      if (entry.key[0] === "docs" && entry.key[3] === 0) restoredDocs++;
      batch.push(entry);
      if (batch.length === WRITE_BATCH) {
        await writeRestoredEntries(kv, batch);
        progress(`restoring index ${i + 1}/${indexFiles.length}`, batch.length);
        batch = [];
      }
    }
    await writeRestoredEntries(kv, batch);
    progress(`restoring index ${i + 1}/${indexFiles.length}`, batch.length + 1);
    if (record === undefined || restoredDocs !== docs) {
      throw new ApiError(
        422,
        `The backup in "${dir}" is damaged: "${file.path}" holds ${restoredDocs} of ${docs} documents`,
      );
    }
    records.push([id, record]);
  }
  const projects: StoredEntry[] = [];
  for (const file of manifest.files.filter((file) => file.index === undefined)) {
    let batch: StoredEntry[] = [];
    for await (const entry of entriesOf(dir, file)) {
      // Projects go last: until they are there, the store counts as empty and a restore that died can be tried again.
      if (entry.key[0] === "projects") projects.push(entry);
      else batch.push(entry);
      if (batch.length === WRITE_BATCH) {
        await writeRestoredEntries(kv, batch);
        progress("restoring records", batch.length);
        batch = [];
      }
    }
    await writeRestoredEntries(kv, batch);
    progress("restoring records", batch.length);
  }
  for (const [id, record] of records) {
    if (!await publishRestoredIndex(kv, id, record)) {
      throw new ApiError(
        409,
        `Cannot restore index ${JSON.stringify(record.key.slice(1))}: the store has one there now`,
      );
    }
  }
  await writeRestoredEntries(kv, projects);
  progress("restored", projects.length);
  return manifest;
}

/** Checks one file's size and SHA-256 against the manifest. */
async function verifyFile(dir: string, file: BackupFile): Promise<void> {
  let actual: { bytes: number; sha256: string };
  try {
    actual = await fileChecksum(`${dir}/${file.path}`);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new ApiError(422, `The backup in "${dir}" is damaged: "${file.path}" is missing`, { cause: error });
    }
    throw error;
  }
  if (actual.sha256 !== file.sha256 || actual.bytes !== file.bytes) {
    throw new ApiError(
      422,
      `The backup in "${dir}" is damaged: "${file.path}" has SHA-256 ${actual.sha256} (${actual.bytes} bytes), the ` +
        `manifest says ${file.sha256} (${file.bytes} bytes)`,
    );
  }
}

async function* entriesOf(dir: string, file: BackupFile): AsyncGenerator<StoredEntry> {
  for await (const line of readJsonLinesGzip(`${dir}/${file.path}`)) {
    const { k, v } = line as BackupLine;
    yield { key: fromKvJson(k) as Deno.KvKey, value: fromKvJson(v) };
  }
}
