/**
 * quire as a request handler with no port of its own: for a user's tests (called like Hono's `app.request()`) and for
 * mounting inside a user's own `Deno.serve` or `deno serve` app.
 */
import { type Config, CONFIG_HELP, parseConfig } from "./config.ts";
import { Embedder } from "./embedding/embedder.ts";
import { BUILT_IN_MODELS, type ModelRegistry } from "./embedding/model_registry.ts";
import { createProject } from "./projects/project_store.ts";
import { openKvStore } from "./storage/kv_store.ts";
import { createService, type Service, upgradeStore } from "./server.ts";

/** A project that the handler makes sure exists, with the key its clients will present. */
export interface ProjectCredentials {
  /** 1-128 letters, digits, `.`, `_` or `-`. */
  id: string;
  /** Any string; a long random one outside tests, as `main.ts project create` makes. */
  key: string;
}

/** Options of {@link createQuireHandler}. */
export interface QuireHandlerOptions {
  /** The store; a fresh in-memory one (`Deno.openKv(":memory:")`, closed by `close()`) when absent. */
  kv?: Deno.Kv;
  /** The embedding models, as in a `MODELS_FILE`; the built-in hub models when absent. */
  models?: ModelRegistry;
  /**
   * Settings by the names and in the form of the environment variables that `main.ts --help` lists, e.g.
   * `{ SEARCH_CACHE_MB: "256" }`; the defaults for those absent. The process's own environment is not read.
   */
  settings?: Record<string, string>;
  /**
   * A project to create with this key when the store does not have it yet. Without one, a store with no project gets
   * the `default` project with a random key, which is lost: pass a project to call the API.
   */
  project?: ProjectCredentials;
}

/** The service as a function from request to response. */
export interface QuireHandler {
  /** Answers one request; `info` is the connection when the caller has one (`Deno.serve` hands it over). */
  fetch(request: Request, info?: Deno.ServeHandlerInfo): Promise<Response>;
  /** Finishes background work and queued jobs, then closes the store if the handler opened it. */
  close(): Promise<void>;
  /** Closes it at the end of an `await using` scope. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Builds the whole service over a store, listening nowhere.
 *
 * @example Calling the API without a port
 * ```ts
 * import { createQuireHandler } from "@quire/server";
 *
 * await using quire = await createQuireHandler({ project: { id: "demo", key: "demo-key" } });
 * const response = await quire.fetch(new Request("http://quire/manage", {
 *   method: "POST",
 *   headers: { "content-type": "application/json", "x-service-version": "v1", "x-project-key": "demo-key" },
 *   body: JSON.stringify({ action: "listIndexes", projectId: "demo" }),
 * }));
 * console.log(await response.json());
 * ```
 */
export async function createQuireHandler(options: QuireHandlerOptions = {}): Promise<QuireHandler> {
  const config = configOf(options.settings);
  const embedder = embedderOf(options.models ?? BUILT_IN_MODELS, config);
  const service = await openService({ ...options, config, embedder });
  let closing: Promise<void> | undefined;
  const close = () =>
    closing ??= (async () => {
      await service.close();
      await embedder.dispose();
    })();
  return { fetch: service.handler, close, [Symbol.asyncDispose]: close };
}

/**
 * The configuration of `settings` (named as environment variables) over the defaults, read from no environment; an
 * Error naming each unknown or invalid setting.
 */
export function configOf(settings: Record<string, string> = {}): Config {
  const unknown = Object.keys(settings).filter((name) => !Object.hasOwn(CONFIG_HELP, name));
  if (unknown.length > 0) {
    throw new Error(`Unknown setting ${unknown.map((name) => `"${name}"`).join(", ")}: see main.ts --help`);
  }
  return parseConfig(settings);
}

/**
 * An embedder of `registry`'s models, with the model cache, downloads and backend that `config` sets; `threads` caps
 * the threads of one model run (onnxruntime's default, one per core, when absent).
 */
export function embedderOf(registry: ModelRegistry, config: Config, threads?: number): Embedder {
  return new Embedder(registry, {
    cacheDir: config.MODEL_CACHE_DIR,
    allowRemote: config.ALLOW_REMOTE_MODELS,
    backend: config.EMBEDDING_BACKEND,
    threads,
  });
}

/** What {@link openService} builds a service from: a configuration and an embedder that its caller owns. */
export interface ServiceParts {
  kv?: Deno.Kv;
  config: Config;
  embedder: Embedder;
  project?: ProjectCredentials;
}

/**
 * Opens the store (in memory unless given), creates the project, and builds the service over them; `close()` also
 * closes a store it opened. The embedder stays open, so that a caller can reuse it.
 */
export async function openService(parts: ServiceParts): Promise<Service> {
  if (parts.kv === undefined && typeof Deno.openKv !== "function") {
    throw new Error('quire needs Deno KV: add "unstable": ["kv"] to deno.json, or run with --unstable-kv');
  }
  const kv = parts.kv ?? await openKvStore(":memory:");
  try {
    // The store's format is checked before the project is written, so that a new store reads as new, not as format 1.
    await upgradeStore(kv);
    if (parts.project !== undefined) await createProject(kv, parts.project.id, parts.project.key);
    // USearch graphs need FFI; a process without it scans vectors exactly, as the wasm backend does.
    const graphs = parts.config.EMBEDDING_BACKEND === "native" &&
      (await Deno.permissions.query({ name: "ffi" })).state === "granted";
    // Local snapshot copies only where asked for: a store in memory has none worth keeping.
    const dir = parts.config.SEGMENT_DIR;
    const segmentDir = dir === undefined || dir === "off" ? undefined : dir;
    const service = await createService(kv, parts.embedder, parts.config, { graphs, segmentDir });
    return {
      ...service,
      async close() {
        await service.close();
        if (parts.kv === undefined) kv.close();
      },
    };
  } catch (error) {
    if (parts.kv === undefined) kv.close();
    throw error;
  }
}
