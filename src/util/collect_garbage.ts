/** Garbage collection on demand. */
/**
 * Runs a full garbage collection where the process was started with `--v8-flags=--expose-gc` (`deno task start` is),
 * so that an evicted index, a read snapshot or a graph's catch-up leaves memory now rather than whenever V8 next gets
 * to it (an idle process collects nothing): the memory budget bounds what the process holds, not only what it uses.
 * It is V8's last-resort flavour, which also gives back the heap's free pages: after a swapped-out state of 300,000
 * documents, a regular one left the heap at 285 MiB for 133 in use until V8's own reducer ran, about 10 s later.
 */
export function collectGarbageNow(): void {
  (globalThis as { gc?: (options: GcOptions) => void }).gc?.({
    type: "major",
    execution: "sync",
    flavor: "last-resort",
  });
}

/** The options of V8's exposed `gc`. */
interface GcOptions {
  type: "major";
  execution: "sync";
  flavor: "last-resort";
}
