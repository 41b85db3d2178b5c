/** Garbage collection on demand. */
/**
 * Runs a full garbage collection where the process was started with `--v8-flags=--expose-gc` (`deno task start` is),
 * so that an evicted index, a read snapshot or a graph's catch-up leaves memory now rather than whenever V8 next gets
 * to it (an idle process collects nothing): the memory budget bounds what the process holds, not only what it uses.
 */
export function collectGarbageNow(): void {
  (globalThis as { gc?: () => void }).gc?.();
}
