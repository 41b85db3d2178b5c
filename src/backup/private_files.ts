/**
 * Files and directories that only their owner may read or list: a backup holds every document and every project's
 * webhook secret. The mode is given when each is created and set again right after, since the process's umask takes
 * bits off the one given (a umask that takes off owner bits would leave a directory the backup cannot write into).
 */
import { dirname } from "node:path";

/** The mode of a backup's directories: the owner reads, writes and lists them, nobody else. */
const PRIVATE_DIRECTORY_MODE = 0o700;

/** The mode of a backup's files: the owner reads and writes them, nobody else. */
const PRIVATE_FILE_MODE = 0o600;

/**
 * Creates the directory at `path` readable by its owner only, and its missing parents as any directory is made; a
 * directory that is there already is left as it is (`BACKUP_DIR` may be a mount point whose mode the operator chose).
 */
export async function makePrivateDirectory(path: string): Promise<void> {
  try {
    await Deno.mkdir(path, { mode: PRIVATE_DIRECTORY_MODE });
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) return;
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    await Deno.mkdir(dirname(path), { recursive: true });
    await Deno.mkdir(path, { mode: PRIVATE_DIRECTORY_MODE });
  }
  await setMode(path, PRIVATE_DIRECTORY_MODE);
}

/** Creates (or truncates) the file at `path` for writing, readable by its owner only. */
export async function createPrivateFile(path: string): Promise<Deno.FsFile> {
  const file = await Deno.open(path, { write: true, create: true, truncate: true, mode: PRIVATE_FILE_MODE });
  try {
    await setMode(path, PRIVATE_FILE_MODE);
  } catch (error) {
    file.close();
    throw error;
  }
  return file;
}

async function setMode(path: string, mode: number): Promise<void> {
  try {
    await Deno.chmod(path, mode);
  } catch (error) {
    // Windows has no such modes: there a file is as private as the directory's access list makes it.
    if (!(error instanceof Deno.errors.NotSupported)) throw error;
  }
}
