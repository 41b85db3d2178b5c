/**
 * Starts `main.ts` shaped like Deno Deploy: models on WebAssembly (`EMBEDDING_BACKEND=wasm`, so no USearch either),
 * no FFI, and write access to the store file alone. SQLite keeps its `-wal` and `-shm` files beside it without a
 * permission of their own. `deno task start:deploy` runs this; arguments pass through to `main.ts`, and SIGINT and
 * SIGTERM are passed on.
 */
import { dirname, resolve } from "node:path";
import { configFromEnvOrExit } from "./src/config.ts";
import { kvFilePath } from "./src/storage/kv_store.ts";

const MAIN = new URL("./main.ts", import.meta.url).pathname;

/** The permission flags of the server in Deploy shape, for a store at `kvPath` (a file, a URL or the default). */
export function deployModeFlags(kvPath: string | undefined): string[] {
  const file = kvFilePath(kvPath);
  const write = file === undefined ? [] : [`--allow-write=${resolve(file)}`];
  return ["--no-prompt", "--deny-ffi", "--allow-net", "--allow-env", "--allow-read", ...write];
}

if (import.meta.main) {
  const config = configFromEnvOrExit();
  // The server may write the store file only, so its directory is made here.
  const file = kvFilePath(config.DENO_KV_PATH);
  if (file !== undefined) await Deno.mkdir(dirname(resolve(file)), { recursive: true });
  const server = new Deno.Command(Deno.execPath(), {
    args: ["run", ...deployModeFlags(config.DENO_KV_PATH), MAIN, ...Deno.args],
    env: { EMBEDDING_BACKEND: "wasm", SEGMENT_DIR: "off" },
  }).spawn();
  for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(signal, () => server.kill(signal));
  Deno.exit((await server.status).code);
}
