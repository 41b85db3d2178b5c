/** How many bytes of search state an instance keeps in memory. */

/** Megabytes of search state an isolate keeps on Deno Deploy (512 MB each), and wherever models run on wasm. */
const DEPLOY_SEARCH_CACHE_MB = 256;

/**
 * The budget in bytes: `SEARCH_CACHE_MB` when set; otherwise a quarter of the machine's memory, or the Deploy figure
 * on the wasm backend and wherever the machine cannot be asked (no `--allow-sys`).
 */
export function searchCacheBudgetBytes(configuredMb: number | undefined, backend: "native" | "wasm"): number {
  return (configuredMb ?? defaultMegabytes(backend)) * 1024 * 1024;
}

function defaultMegabytes(backend: "native" | "wasm"): number {
  if (backend === "wasm") return DEPLOY_SEARCH_CACHE_MB;
  try {
    return Math.floor(Deno.systemMemoryInfo().total / 4 / (1024 * 1024));
  } catch {
    return DEPLOY_SEARCH_CACHE_MB;
  }
}
