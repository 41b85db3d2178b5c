/** Shared test factories: generated models, a real server on loopback over a temporary KV file, and assertions. */
import assert from "node:assert/strict";
import { type Config, parseConfig } from "../src/config.ts";
import { Embedder } from "../src/embedding/embedder.ts";
import type { ModelRegistry } from "../src/embedding/model_registry.ts";
import { openKvStore } from "../src/storage/kv_store.ts";
import type { SearchIndex } from "../src/search/search_index.ts";
import type { TextIndex } from "../src/search/text_index.ts";
import type { TextQuery, TextScores } from "../src/search/text_query.ts";
import { encodeSearchSnapshot } from "../src/search/search_snapshot_codec.ts";
import { concatBytes } from "../src/util/concat_bytes.ts";
import { readSnapshot } from "../src/storage/snapshot_store.ts";
import type { Slices } from "../src/util/time_slices.ts";
import { type RunningService, startService } from "../src/server.ts";
import { TINY_BERT, writeBertModel } from "../tools/tiny_bert.ts";

let models: Promise<ModelRegistry> | undefined;

/**
 * A fresh temporary directory, removed when the test process exits rather than when one server stops: restart tests
 * start several servers over one store. Stores of benchmark servers take a gigabyte each.
 */
export async function temporaryDir(prefix: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix });
  addEventListener("unload", () => {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // Already removed by the test itself.
    }
  });
  return dir;
}

/** A registry of two generated tiny models, written once per test process. */
export function testModels(): Promise<ModelRegistry> {
  models ??= (async () => {
    const dir = await temporaryDir("quire-models-");
    await writeBertModel(`${dir}/minilm`, TINY_BERT);
    await writeBertModel(`${dir}/mediumlm`, { ...TINY_BERT, hidden: 48, heads: 3, seed: 2 });
    return {
      "svc-minilm": { source: `${dir}/minilm`, version: "tiny-minilm-1", dtype: "fp32" },
      "svc-mediumlm": { source: `${dir}/mediumlm`, version: "tiny-mediumlm-1", dtype: "fp32" },
    };
  })();
  return models;
}

let rerankers: Promise<ModelRegistry> | undefined;

/**
 * A registry of one generated tiny cross-encoder, `svc-rerank` (written once per test process, loaded at first use):
 * it scores a pair by how many of the text's tokens the query holds, give or take 0.4. Not among {@link testModels},
 * whose every model embeds.
 */
export function testRerankers(): Promise<ModelRegistry> {
  rerankers ??= (async () => {
    const dir = await temporaryDir("quire-rerankers-");
    await writeBertModel(`${dir}/rerank`, { ...TINY_BERT, seed: 3 }, { crossEncoder: "overlap", quantized: true });
    return { "svc-rerank": { kind: "reranker", source: `${dir}/rerank`, version: "tiny-rerank-1", dtype: "q8" } };
  })();
  return rerankers;
}

/**
 * A server (with the settings of `env`) whose `svc-mediumlm` is a model directory with a valid tokenizer and a corrupt
 * ONNX file, so that loading it fails the way a broken download would.
 */
export async function startServerWithBrokenMediumModel(env: Record<string, string> = {}): Promise<TestServer> {
  const models = await testModels();
  const broken = await Deno.makeTempDir();
  await Deno.mkdir(`${broken}/onnx`);
  for (const file of ["config.json", "tokenizer.json", "tokenizer_config.json"]) {
    await Deno.copyFile(`${models["svc-minilm"]!.source}/${file}`, `${broken}/${file}`);
  }
  await Deno.writeTextFile(`${broken}/onnx/model.onnx`, "this is not an onnx model");
  const registry = { ...models, "svc-mediumlm": { source: broken, version: "broken-1" } };
  return await startTestServer({
    env,
    embedder: () => new Embedder(registry, { cacheDir: `${broken}/cache`, allowRemote: false }),
  });
}

/** A configuration for tests: loopback, an ephemeral port, a temporary store, no hub, no request log in test output. */
export function testConfig(kvPath: string, env: Record<string, string> = {}): Config {
  return parseConfig({
    HOSTNAME: "127.0.0.1",
    PORT: "0",
    DENO_KV_PATH: kvPath,
    ALLOW_REMOTE_MODELS: "false",
    LOG_REQUESTS: "false",
    ...env,
  });
}

/** A running test server and ways to call it. */
export interface TestServer {
  url: string;
  kvPath: string;
  kv: Deno.Kv;
  service: RunningService;
  /** The key of the `default` project. */
  key: string;
  /** Sends a raw body to `POST /manage` with the JSON type, version and key headers unless `headers` override them. */
  send(body: BodyInit, headers?: Record<string, string>): Promise<Response>;
  /** Sends `body` to `POST /manage` as the `default` project unless `body` or `headers` say otherwise. */
  call(body: Record<string, unknown>, headers?: Record<string, string>): Promise<Response>;
  /** Calls and asserts a 200, returning the parsed body. */
  ok<T = unknown>(body: Record<string, unknown>): Promise<T>;
  /** Stops the server and closes the store, then starts both again over the same file. */
  restart(): Promise<TestServer>;
  /** Stops the server and closes the store; again, it does nothing. */
  close(): Promise<void>;
  /** {@link close}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** Options of {@link startTestServer}. */
export interface TestServerOptions {
  /** Reuse this store file (a restart). */
  kvPath?: string;
  /** The key of the `default` project, when the store already has it. */
  key?: string;
  env?: Record<string, string>;
  /** Makes the embedder; the generated test models by default. */
  embedder?: () => Embedder;
}

/** Starts the real service on an ephemeral loopback port over a KV file in a fresh temporary directory. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const kvPath = options.kvPath ?? `${await temporaryDir("quire-kv-")}/quire.kv`;
  const config = testConfig(kvPath, options.env);
  const kv = await openKvStore(kvPath);
  const embedder = options.embedder?.() ??
    new Embedder(await testModels(), { cacheDir: `${kvPath}.models`, allowRemote: false });
  let key = options.key ?? "";
  const service = await startService(kv, embedder, config, { onDefaultProject: (created) => key = created });
  const url = `http://127.0.0.1:${service.addr.port}/manage`;
  const send = (body: BodyInit, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "x-service-version": "v1", "x-project-key": key, ...headers },
      body,
    });
  const call = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    send(JSON.stringify({ projectId: "default", ...body }), headers);
  let closing: Promise<void> | undefined;
  const close = () =>
    closing ??= (async () => {
      await service.shutdown();
      await embedder.dispose();
      kv.close();
    })();
  return {
    url,
    kvPath,
    kv,
    service,
    key,
    send,
    call,
    async ok<T>(body: Record<string, unknown>): Promise<T> {
      const response = await call(body);
      const json = await response.json();
      assert.equal(response.status, 200, `${body.action} failed: ${JSON.stringify(json)}`);
      return json as T;
    },
    async restart() {
      await close();
      return await startTestServer({ ...options, kvPath, key });
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** Asserts a JSON error response with `status`, whose message matches `pattern`; returns the body. */
export async function assertJsonError(
  response: Response,
  status: number,
  pattern?: RegExp,
): Promise<{ error: string; action?: string }> {
  const body = await response.json();
  assert.equal(response.status, status, `expected ${status}, got ${response.status}: ${JSON.stringify(body)}`);
  assert.match(response.headers.get("content-type") ?? "", /application\/json/);
  assert.equal(typeof body.error, "string");
  assert.doesNotMatch(body.error, /\bat .*\.ts:\d+/, "no stack traces in errors");
  if (pattern !== undefined) assert.match(body.error, pattern);
  return body;
}

let docCounter = 0;
const WORDS = ["cat", "dog", "river", "music", "search", "apple", "storm", "train", "forest", "science"];

/** A document with a unique id and a short random text. */
export function randomDoc(
  metadata?: Record<string, unknown>,
): { id: string; text: string; metadata?: Record<string, unknown> } {
  const id = `doc-${++docCounter}-${crypto.randomUUID().slice(0, 8)}`;
  const text = Array.from({ length: 6 }, () => WORDS[Math.floor(Math.random() * WORDS.length)]).join(" ");
  return metadata === undefined ? { id, text } : { id, text, metadata };
}

/** An index's whole snapshot, joined from copies of the pieces that {@link encodeSearchSnapshot} hands on. */
export async function snapshotBytes(index: SearchIndex, slices?: Slices): Promise<Uint8Array> {
  const pieces: Uint8Array[] = [];
  for await (const piece of encodeSearchSnapshot(index, slices)) pieces.push(piece.slice());
  return concatBytes(pieces);
}

/** `bytes` in chunks of the given sizes, in turn, each overwritten once the next is asked for. */
export async function* chunksOf(bytes: Uint8Array, sizes: number[]): AsyncGenerator<Uint8Array> {
  for (let at = 0, i = 0; at < bytes.byteLength; i++) {
    const size = sizes[i % sizes.length]!;
    const chunk = bytes.slice(at, at + size);
    yield chunk;
    chunk.fill(0xff);
    at += size;
  }
}

/** An index's current snapshot read whole, its revision and bytes, or null when it has none. */
export function readWholeSnapshot(
  kv: Deno.Kv,
  indexId: string,
): Promise<{ revision: number; bytes: Uint8Array } | null> {
  return readSnapshot(kv, indexId, async ({ pointer, chunks }) => {
    const parts: Uint8Array[] = [];
    for await (const chunk of chunks) parts.push(chunk);
    return { revision: pointer.revision, bytes: concatBytes(parts) };
  });
}

/** Copies of the BM25 scores that {@link TextIndex.withScores} lends for the length of a call. */
export function textScores(text: TextIndex, query: TextQuery, keep?: (slot: number) => boolean): TextScores {
  return text.withScores(query, keep, ({ slots, scores }) => ({ slots: slots.slice(), scores: scores.slice() }));
}

/**
 * The files process `pid` (this one by default) maps, as `/proc/<pid>/maps` lists them: read by a child process, since
 * Deno grants a read of `/proc` files only with every permission.
 */
export async function mappedFiles(pid = Deno.pid): Promise<string> {
  const { stdout } = await new Deno.Command("cat", { args: [`/proc/${pid}/maps`] }).output();
  return new TextDecoder().decode(stdout);
}
