/**
 * Finds files shipped with the app: a relative path is looked up in the working directory first, then in the app's
 * own directory. In a binary built by `deno compile --include models/ …`, the included files live there.
 */
import { isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The directory of `main.ts`: the repository, or the root of a compiled binary's embedded files. */
const APP_DIR = fileURLToPath(new URL("../..", import.meta.url));

/** The absolute path of the `kind` that `path` names, or undefined when neither place has one. */
export async function findAppFile(path: string, kind: "file" | "directory"): Promise<string | undefined> {
  const candidates = isAbsolute(path) ? [path] : [join(Deno.cwd(), path), join(APP_DIR, path)];
  for (const candidate of candidates) {
    try {
      const info = await Deno.stat(candidate);
      if (kind === "file" ? info.isFile : info.isDirectory) return candidate;
    } catch {
      // Not here; try the next place.
    }
  }
  return undefined;
}
