/** Reads the service's configuration from environment variables. */
import { z } from "zod";
import type { Limits } from "./api/request_schemas.ts";
import { parseDuration } from "./util/duration.ts";
import { normalizeHost } from "./util/host_names.ts";
import { EMBEDDING_BACKENDS, type EmbeddingBackend } from "./embedding/transformers_runtime.ts";

const MIB = 1024 * 1024;

/** A whole number written in plain decimal digits, as an operator means it: not `0x1F90`, `1e3` or ` 5`. */
const wholeNumber = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.string().regex(/^\d+$/, "expected a whole number in decimal digits").transform(Number)
    .pipe(z.number().min(min, `expected at least ${min}`).max(max, `expected at most ${max}`));

const positiveInt = (fallback: number) => wholeNumber(1).default(fallback);

/** `*`, `none`, or origins (`scheme://host[:port]`) separated by commas. */
const corsOrigins = z.string().refine(
  (value) => value === "*" || value === "none" || value.split(",").every((origin) => isOrigin(origin.trim())),
  "use *, none, or origins such as https://app.example separated by commas",
);

function isOrigin(value: string): boolean {
  try {
    return new URL(value).origin === value;
  } catch {
    return false;
  }
}

/** A duration such as `90s`, `30m`, `6h` or `7d` (or `0`), in milliseconds. */
const duration = (fallback: string) =>
  z.string().default(fallback).transform((text, ctx) => {
    const ms = parseDuration(text);
    if (ms === null) {
      ctx.addIssue({ code: "custom", message: "expected a duration such as 90s, 30m, 6h or 7d" });
      return z.NEVER;
    }
    return ms;
  });

/** Hosts (`host` or `host:port`) separated by commas, each normalized as a URL writes it. */
const hostList = z.string().transform((text, ctx) => {
  const entries = text.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "");
  const hosts = entries.map(normalizeHost);
  const bad = entries.find((_, i) => hosts[i] === null);
  if (bad !== undefined) {
    ctx.addIssue({
      code: "custom",
      message: `"${bad}" is not a host: use hosts such as hooks.example.com or 127.0.0.1:9000`,
    });
    return z.NEVER;
  }
  return hosts as string[];
});

const booleanFlag = (fallback: boolean) =>
  z.enum(["true", "false", "1", "0"]).default(fallback ? "true" : "false").transform((v) => v === "true" || v === "1");

const configSchema = z.object({
  HOSTNAME: z.string().min(1).default("0.0.0.0"),
  PORT: wholeNumber(0, 65535).default(8000),
  DENO_KV_PATH: z.string().min(1).optional(),
  MODELS_FILE: z.string().min(1).optional(),
  MODEL_CACHE_DIR: z.string().min(1).default("./data/models"),
  ALLOW_REMOTE_MODELS: booleanFlag(true),
  EMBEDDING_BACKEND: z.enum(EMBEDDING_BACKENDS).optional(),
  MAX_BODY_BYTES: positiveInt(32 * MIB),
  MAX_DOCS_PER_REQUEST: positiveInt(10_000),
  MAX_DOC_ID_BYTES: positiveInt(512),
  MAX_DOC_TEXT_BYTES: positiveInt(256 * 1024),
  MAX_METADATA_BYTES: positiveInt(16 * 1024),
  SEARCH_CACHE_INDEXES: positiveInt(64),
  SEARCH_CACHE_MB: wholeNumber(1).optional(),
  SEGMENT_DIR: z.string().min(1).optional(),
  PROCESSES: wholeNumber(1, 64).default(1),
  METADATA_CACHE_MS: wholeNumber(0).default(250),
  BODY_TIMEOUT_MS: positiveInt(10_000),
  BODY_IDLE_TIMEOUT_MS: positiveInt(5_000),
  PROJECT_MAX_CONCURRENCY: positiveInt(64),
  SHUTDOWN_TIMEOUT_MS: positiveInt(10_000),
  LOG_REQUESTS: booleanFlag(true),
  METRICS_TOKEN: z.string().regex(/^[\x21-\x7e]{16,512}$/, "use 16-512 visible ASCII characters").optional(),
  CORS_ORIGINS: corsOrigins.default("*"),
  BACKUP_DIR: z.string().min(1).optional(),
  BACKUP_INTERVAL: duration("24h").pipe(z.number().min(1_000, "expected at least 1s")),
  BACKUP_KEEP: positiveInt(7),
  WEBHOOK_ALLOWED_HOSTS: hostList.optional(),
  UNDO_WINDOW: duration("24h"),
  ANALYTICS: booleanFlag(true),
  ANALYTICS_TOP: wholeNumber(1, 100_000).default(1_000),
  ANALYTICS_DAYS: wholeNumber(1, 3_660).default(30),
  ANALYTICS_FLUSH_INTERVAL: duration("5s").pipe(z.number().min(10, "expected at least 10ms")),
});

/**
 * The parsed configuration; names match the environment variables. `DENO_KV_PATH` is undefined only on Deno Deploy,
 * where `Deno.openKv()` without a path opens the app's database.
 */
export type Config = Omit<z.output<typeof configSchema>, "EMBEDDING_BACKEND"> & { EMBEDDING_BACKEND: EmbeddingBackend };

/** The store a local run uses when `DENO_KV_PATH` is unset. */
const LOCAL_KV_PATH = "./data/quire.kv";

/** Every variable with its description, for `--help` and the README. */
export const CONFIG_HELP: Record<keyof Config, string> = {
  HOSTNAME: "Interface to listen on (default 0.0.0.0)",
  PORT: "Port to listen on (default 8000)",
  DENO_KV_PATH: "Deno KV file path or KV Connect URL (default ./data/quire.kv; on Deno Deploy, the app's database)",
  MODELS_FILE: "JSON model registry replacing the built-in one (optional)",
  MODEL_CACHE_DIR: "Where hub models are downloaded; with wasm, only read (default ./data/models)",
  ALLOW_REMOTE_MODELS: "Download models from the hub when not on disk (default true)",
  EMBEDDING_BACKEND:
    "native (onnxruntime-node, HNSW via USearch) or wasm (onnxruntime-web, exact vector scan, no FFI, no disk writes " +
    "but the store) (default native; wasm on Deno Deploy)",
  MAX_BODY_BYTES: "Largest request body in bytes (default 33554432)",
  MAX_DOCS_PER_REQUEST:
    "Most documents in one createIndex or addDocs, ids in one deleteDocs or getDocs, items on a page (default 10000)",
  MAX_DOC_ID_BYTES: "Longest document id in UTF-8 bytes (default 512)",
  MAX_DOC_TEXT_BYTES: "Longest document text in UTF-8 bytes (default 262144)",
  MAX_METADATA_BYTES: "Largest document metadata as JSON, in UTF-8 bytes (default 16384)",
  SEARCH_CACHE_INDEXES: "Most indexes kept in memory for search, least recently searched out first (default 64)",
  SEARCH_CACHE_MB:
    "Most megabytes of search state kept in memory, least recently searched out first (default a quarter of the " +
    "machine's memory; 256 on Deno Deploy and with the wasm backend)",
  SEGMENT_DIR:
    "Where this host keeps local copies of index snapshots and the graphs, codes and mapped rows loads derive from them, read at a " +
    "load instead of the store (default segments beside the store file, ./data/segments with KV Connect; off: none, " +
    "as on Deno Deploy)",
  PROCESSES: "Server processes to start on one port, each a full instance over the same store (default 1)",
  METADATA_CACHE_MS:
    "How long project keys and index records read for auth and getIndex are reused (default 250; 0: off)",
  BODY_TIMEOUT_MS:
    "Longest wait for a request body before answering 408, one second more for every 64 KiB received (default 10000)",
  BODY_IDLE_TIMEOUT_MS: "Longest wait for the next chunk of a request body before answering 408 (default 5000)",
  PROJECT_MAX_CONCURRENCY: "Most requests one project may have in flight; more get 429 (default 64)",
  SHUTDOWN_TIMEOUT_MS: "On SIGTERM/SIGINT, longest wait for in-flight requests and background work (default 10000)",
  LOG_REQUESTS: "Write one JSON line per request to stdout (default true)",
  METRICS_TOKEN: "Bearer token that GET /metrics then requires from every client (optional; without it: loopback only)",
  CORS_ORIGINS: "Origins whose pages may call the API: *, a comma-separated list of origins, or none (default *)",
  BACKUP_DIR:
    "Directory that scheduled backups are written into, one instance at a time (optional; without it: none); see " +
    "also cli backup now and cli restore",
  BACKUP_INTERVAL: "How often a backup is written into BACKUP_DIR, e.g. 90s, 30m or 6h (default 24h)",
  BACKUP_KEEP: "How many backups BACKUP_DIR keeps; the oldest beyond them are deleted (default 7)",
  WEBHOOK_ALLOWED_HOSTS:
    "Hosts (host:port, or host for the scheme's default port only; comma-separated) that options.notify URLs may " +
    "name; https unless loopback (default none: no webhooks)",
  UNDO_WINDOW: "How long a deleted index can be brought back with restoreIndex, e.g. 30m or 7d (default 24h; 0: off)",
  ANALYTICS: "Record every search for searchAnalytics: normalized query, results, duration (default true)",
  ANALYTICS_TOP: "Most distinct queries search analytics keep per index and UTC day, the most searched (default 1000)",
  ANALYTICS_DAYS: "How many UTC days of search analytics are kept, today included (default 30)",
  ANALYTICS_FLUSH_INTERVAL:
    "How often each instance adds its counted searches into the store; a kill -9 loses at most this much (default 5s)",
};

/**
 * Parses `env`; throws an Error with one line per bad variable. On Deno Deploy (`DENO_DEPLOY=true`, where no
 * `DENO_`-prefixed variable can be set) the store is the app's database and models run on WebAssembly.
 */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const picked = Object.fromEntries(
    Object.keys(CONFIG_HELP).map((name) => [name, env[name] === "" ? undefined : env[name]]),
  );
  const result = configSchema.safeParse(picked);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => {
      const name = String(issue.path[0]);
      const value = name === "METRICS_TOKEN" ? "" : ` ${JSON.stringify(picked[name])}`;
      return `Invalid ${name}${value}: ${issue.message}`;
    });
    throw new Error(lines.join("\n"));
  }
  const onDeploy = env.DENO_DEPLOY === "true";
  return {
    ...result.data,
    DENO_KV_PATH: result.data.DENO_KV_PATH ?? (onDeploy ? undefined : LOCAL_KV_PATH),
    EMBEDDING_BACKEND: result.data.EMBEDDING_BACKEND ?? (onDeploy ? "wasm" : "native"),
    // Deploy has no disk to keep copies on.
    SEGMENT_DIR: result.data.SEGMENT_DIR ?? (onDeploy ? "off" : undefined),
  };
}

/** Parses the process's environment, or prints the bad values, one line each, and exits with code 1. */
export function configFromEnvOrExit(): Config {
  try {
    return parseConfig(Deno.env.toObject());
  } catch (error) {
    console.error((error as Error).message);
    Deno.exit(1);
  }
}

/** The request limits of a configuration. */
export function limitsOf(config: Config): Limits {
  return {
    maxDocsPerRequest: config.MAX_DOCS_PER_REQUEST,
    maxDocIdBytes: config.MAX_DOC_ID_BYTES,
    maxDocTextBytes: config.MAX_DOC_TEXT_BYTES,
    maxMetadataBytes: config.MAX_METADATA_BYTES,
  };
}
