/**
 * A file written under a draft's name, step by step, as a snapshot's parts go by (see `rows_files.ts` and
 * `codes_files.ts`): the first step that fails closes and removes it, and its end tells whether it was written whole. A
 * failure only ever means no file, never the caller's work.
 */
import { removeQuietly } from "./graph_files.ts";

/** A file being written at a new path, which is removed unless it is finished whole. */
export class FileDraft {
  readonly #path: string;
  readonly #finished: (whole: boolean) => void;
  #file: Deno.FsFile | undefined;

  /** Creates the file at `path` (none if it cannot be); `finished` is told, once, whether it was written whole. */
  constructor(path: string, finished: (whole: boolean) => void) {
    this.#path = path;
    this.#finished = finished;
    try {
      this.#file = Deno.openSync(path, { write: true, createNew: true, mode: 0o600 });
    } catch {
      this.#fail();
    }
  }

  /** Runs `step` on the file, unless an earlier one failed; one that throws closes and removes the file. */
  write(step: (file: Deno.FsFile) => void): void {
    if (this.#file === undefined) return;
    try {
      step(this.#file);
    } catch {
      this.#fail();
    }
  }

  /** When `whole`, runs the `last` step and closes the file; otherwise, or if that fails, removes it. Called once. */
  finish(whole: boolean, last: (file: Deno.FsFile) => void = () => {}): void {
    if (this.#file === undefined) return this.#finished(false);
    if (!whole) {
      this.#fail();
      return this.#finished(false);
    }
    try {
      last(this.#file);
      this.#file.close();
      this.#file = undefined;
      this.#finished(true);
    } catch {
      this.#fail();
      this.#finished(false);
    }
  }

  #fail(): void {
    this.#file?.close();
    this.#file = undefined;
    removeQuietly(this.#path);
  }
}
