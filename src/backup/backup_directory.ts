/**
 * The backup directory (`BACKUP_DIR`): each backup a directory named for its UTC start time, written under a temporary
 * `.tmp-` name first; the oldest beyond the number to keep are deleted, and only directories of that name pattern are
 * ever touched.
 */

/** The prefix of every backup's final name. */
const BACKUP_PREFIX = "quire-backup-";

/** The prefix of a backup being written. */
export const TEMPORARY_PREFIX = ".tmp-";

/** A backup's final name: `quire-backup-` and its start time in UTC, e.g. `quire-backup-20260115T103000.123Z`. */
const BACKUP_NAME = /^quire-backup-\d{8}T\d{6}\.\d{3}Z$/;

/** The final name of a backup begun at `at`; names sort as their times do. */
export function backupName(at: Date): string {
  return BACKUP_PREFIX + at.toISOString().replaceAll("-", "").replaceAll(":", "");
}

/** Whether `name` is a backup's final name. */
export function isBackupName(name: string): boolean {
  return BACKUP_NAME.test(name);
}

/** The final names of the backups in `dir`, oldest first; none when `dir` does not exist. */
export async function listBackups(dir: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.isDirectory && isBackupName(entry.name)) names.push(entry.name);
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  return names.sort();
}

/** Deletes the oldest backups in `dir` beyond the newest `keep`; returns the names deleted. */
export async function pruneBackups(dir: string, keep: number): Promise<string[]> {
  const names = await listBackups(dir);
  const deleted = names.slice(0, Math.max(0, names.length - keep));
  for (const name of deleted) await Deno.remove(`${dir}/${name}`, { recursive: true });
  return deleted;
}

/**
 * Deletes the temporary directories in `dir` other than `keepName`: left by a writer that died, since only the
 * holder of the backup lease writes one.
 */
export async function removeTemporaryDirs(dir: string, keepName?: string): Promise<void> {
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isDirectory && entry.name.startsWith(TEMPORARY_PREFIX) && entry.name !== keepName) {
      await Deno.remove(`${dir}/${entry.name}`, { recursive: true });
    }
  }
}

/** Flushes a directory's entries (new files, a rename) to disk where the file system allows it; FUSE mounts may not. */
export async function syncDirectory(path: string): Promise<void> {
  try {
    const dir = await Deno.open(path, { read: true });
    try {
      await dir.sync();
    } finally {
      dir.close();
    }
  } catch {
    // Not every file system opens or syncs a directory; the files in it were synced one by one.
  }
}
