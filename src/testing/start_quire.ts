/**
 * quire in a user's `deno test` suite: the whole service in-process, on a loopback port, over an in-memory Deno KV,
 * with a fresh project and, unless told otherwise, the built-in hash embedding standing in for the default model. It
 * needs `--allow-net=127.0.0.1` and `"unstable": ["kv"]` in the app's `deno.json`.
 *
 * @example A test against quire
 * ```ts
 * import { startQuire } from "@quire/server/testing";
 *
 * Deno.test("indexes and finds", async () => {
 *   await using quire = await startQuire();
 *   await quire.client.createIndex("notes", [{ id: "1", text: "Quire keeps indexes" }]);
 *   const { hits } = await quire.client.search("notes", "indexes");
 *   if (hits[0]?.id !== "1") throw new Error("not found");
 * });
 * ```
 *
 * @module
 */
import { QuireClient } from "../../client.ts";
import { HASH_MODELS, type ModelRegistry } from "../embedding/model_registry.ts";
import { generateProjectKey } from "../projects/project_keys.ts";
import { configOf, embedderOf, openService } from "../quire_handler.ts";

export * from "../../client.ts";
export type { ModelDtype, ModelRegistry, ModelSpec } from "../embedding/model_registry.ts";
import type { Service } from "../server.ts";

/** Options of {@link startQuire}. */
export interface StartQuireOptions {
  /**
   * The embedding models, as in a `MODELS_FILE` (e.g. generated BERT directories), for tests that need the real
   * pipeline. By default `svc-minilm` (the default model) and `svc-hash` are the hash embedding: lexical and
   * deterministic, with no files, no network and no native code.
   */
  models?: ModelRegistry;
  /**
   * Settings by the names and in the form of the environment variables that `main.ts --help` lists, e.g.
   * `{ MAX_DOCS_PER_REQUEST: "100" }`. The process's own environment is not read.
   */
  settings?: Record<string, string>;
}

/** A running quire for a test. */
export interface TestQuire {
  /** The service's base URL, e.g. `http://127.0.0.1:41234`; the API is `POST ${url}/manage`. */
  url: string;
  /** The project's id. */
  projectId: string;
  /** The project's key, for the `x-project-key` header. */
  key: string;
  /** A client bound to the project. */
  client: QuireClient;
  /** Deletes every index and job; the project, its key, the URL and the client stay. */
  reset(): Promise<void>;
  /** Stops the server and frees everything it holds. */
  close(): Promise<void>;
  /** Closes it at the end of an `await using` scope. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** The project of every {@link startQuire} instance; each has its own store, so the id never clashes. */
const TEST_PROJECT_ID = "test";

/**
 * Budget of the search cache: a fixed figure, since the default (a quarter of the machine's memory) would need
 * `--allow-sys` to read.
 */
const TEST_SEARCH_CACHE_MB = "256";

/**
 * Starts quire in-process for a test: needs `--allow-net=127.0.0.1` only, with the default models.
 *
 * @example A test against quire
 * ```ts
 * import { startQuire } from "@quire/server/testing";
 *
 * Deno.test("finds the password answer", async () => {
 *   await using quire = await startQuire();
 *   await quire.client.createIndex("faq", [
 *     { id: "pw", text: "Reset your password from the sign-in page" },
 *     { id: "ship", text: "Orders ship within two days" },
 *   ]);
 *   const { hits } = await quire.client.search("faq", "forgot password", { mode: "vector" });
 *   if (hits[0]?.id !== "pw") throw new Error("expected the password answer first");
 * });
 * ```
 */
export async function startQuire(options: StartQuireOptions = {}): Promise<TestQuire> {
  const config = configOf({ SEARCH_CACHE_MB: TEST_SEARCH_CACHE_MB, LOG_REQUESTS: "false", ...options.settings });
  const embedder = embedderOf(options.models ?? HASH_MODELS, config);
  const project = { id: TEST_PROJECT_ID, key: generateProjectKey() };
  let service: Service = await openService({ config, embedder, project });
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      (request, info) => service.handler(request, info),
    );
  } catch (error) {
    await service.close();
    await embedder.dispose();
    throw error;
  }
  const url = `http://127.0.0.1:${server.addr.port}`;
  let closing: Promise<void> | undefined;
  const close = () =>
    closing ??= (async () => {
      await server.shutdown();
      await service.close();
      await embedder.dispose();
    })();
  return {
    url,
    projectId: project.id,
    key: project.key,
    client: new QuireClient({ baseUrl: url, projectId: project.id, key: project.key }),
    async reset() {
      // A new service over a new in-memory store, with the same project and key, behind the same port.
      const old = service;
      service = await openService({ config, embedder, project });
      await old.close();
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
