/** Opens Deno KV at a file path, a KV Connect URL, or (on Deno Deploy) the platform's database. */
import { dirname } from "node:path";

/**
 * Opens the store; a file path whose directory is missing gets it created first (an existing one is left alone, so
 * that write access to the store file alone suffices). Without a path, Deno's default store opens: the app's
 * database on Deno Deploy.
 */
export async function openKvStore(path: string | undefined): Promise<Deno.Kv> {
  const file = kvFilePath(path);
  if (file !== undefined && !await exists(dirname(file))) await Deno.mkdir(dirname(file), { recursive: true });
  return await Deno.openKv(path);
}

/** The file a store path names, or undefined for the platform's store, `:memory:` and KV Connect URLs. */
export function kvFilePath(path: string | undefined): string | undefined {
  return path === undefined || path === ":memory:" || /^https?:\/\//.test(path) ? undefined : path;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}
