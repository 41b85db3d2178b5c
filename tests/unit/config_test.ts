/** Unit: environment variables parse with defaults and fail with one clear line each. */
import assert from "node:assert/strict";
import { type Config, CONFIG_HELP, parseConfig } from "../../src/config.ts";

Deno.test("defaults apply when nothing is set", () => {
  const config = parseConfig({});
  assert.equal(config.HOSTNAME, "0.0.0.0");
  assert.equal(config.PORT, 8000);
  assert.equal(config.DENO_KV_PATH, "./data/quire.kv");
  assert.equal(config.MODEL_CACHE_DIR, "./data/models");
  assert.equal(config.ALLOW_REMOTE_MODELS, true);
  assert.equal(config.MAX_BODY_BYTES, 32 * 1024 * 1024);
  assert.equal(config.MAX_DOCS_PER_REQUEST, 10_000);
  assert.equal(config.MAX_DOC_ID_BYTES, 512);
  assert.equal(config.MAX_DOC_TEXT_BYTES, 256 * 1024);
  assert.equal(config.MAX_METADATA_BYTES, 16 * 1024);
  assert.equal(config.MODELS_FILE, undefined);
  assert.equal(config.EMBEDDING_BACKEND, "native");
});

Deno.test("on Deno Deploy the store is the app's database and models run on WebAssembly", () => {
  const config = parseConfig({ DENO_DEPLOY: "true" });
  assert.equal(config.DENO_KV_PATH, undefined);
  assert.equal(config.EMBEDDING_BACKEND, "wasm");
  assert.equal(parseConfig({ DENO_DEPLOY: "true", EMBEDDING_BACKEND: "native" }).EMBEDDING_BACKEND, "native");
  assert.throws(() => parseConfig({ EMBEDDING_BACKEND: "gpu" }), /Invalid EMBEDDING_BACKEND "gpu": .*"native"\|"wasm"/);
});

Deno.test("values are parsed and bad ones are reported one line each", () => {
  const config = parseConfig({ PORT: "9001", ALLOW_REMOTE_MODELS: "false", MAX_BODY_BYTES: "1024" });
  assert.equal(config.PORT, 9001);
  assert.equal(config.ALLOW_REMOTE_MODELS, false);
  assert.equal(config.MAX_BODY_BYTES, 1024);
  assert.throws(
    () => parseConfig({ PORT: "http", MAX_DOCS_PER_REQUEST: "-1" }),
    (error: Error) => {
      const lines = error.message.split("\n");
      assert.equal(lines.length, 2);
      assert.equal(lines[0], 'Invalid PORT "http": expected a whole number in decimal digits');
      assert.equal(lines[1], 'Invalid MAX_DOCS_PER_REQUEST "-1": expected a whole number in decimal digits');
      return true;
    },
  );
  for (
    const [name, bad] of [["PORT", "0x1F90"], ["PORT", "70000"], ["BODY_TIMEOUT_MS", "1e3"], ["MAX_BODY_BYTES", " 5"]]
  ) {
    assert.throws(() => parseConfig({ [name!]: bad }), new RegExp(`^Error: Invalid ${name} `), `${name}=${bad}`);
  }
  assert.throws(() => parseConfig({ PROJECT_MAX_CONCURRENCY: "0" }), /expected at least 1/);
});

Deno.test("CORS_ORIGINS is *, none, or a list of origins", () => {
  assert.equal(parseConfig({}).CORS_ORIGINS, "*");
  for (const good of ["none", "https://a.example", "https://a.example, http://localhost:3000"]) {
    assert.equal(parseConfig({ CORS_ORIGINS: good }).CORS_ORIGINS, good);
  }
  for (const bad of ["not-an-origin", "https://a.example/path", "https://a.example,", "*, https://a.example"]) {
    assert.throws(() => parseConfig({ CORS_ORIGINS: bad }), /^Error: Invalid CORS_ORIGINS /, bad);
  }
});

Deno.test("the request log is on unless LOG_REQUESTS is false, and METRICS_TOKEN must be 16-512 visible characters", () => {
  assert.equal(parseConfig({}).LOG_REQUESTS, true);
  assert.equal(parseConfig({ LOG_REQUESTS: "false" }).LOG_REQUESTS, false);
  assert.equal(parseConfig({}).METRICS_TOKEN, undefined);
  assert.equal(parseConfig({ METRICS_TOKEN: "s3cret-metrics-token" }).METRICS_TOKEN, "s3cret-metrics-token");
  for (const bad of ["short", "has spaces in the token", "x".repeat(513)]) {
    assert.throws(() => parseConfig({ METRICS_TOKEN: bad }), /^Error: Invalid METRICS_TOKEN: use 16-512 visible/);
  }
});

Deno.test("backups are off without BACKUP_DIR; BACKUP_INTERVAL is a duration of at least 1s", () => {
  const config = parseConfig({});
  assert.equal(config.BACKUP_DIR, undefined);
  assert.equal(config.BACKUP_INTERVAL, 24 * 60 * 60 * 1000);
  assert.equal(config.BACKUP_KEEP, 7);
  const set = parseConfig({ BACKUP_DIR: "/mnt/backups", BACKUP_INTERVAL: "90s", BACKUP_KEEP: "30" });
  assert.deepEqual([set.BACKUP_DIR, set.BACKUP_INTERVAL, set.BACKUP_KEEP], ["/mnt/backups", 90_000, 30]);
  assert.equal(parseConfig({ BACKUP_INTERVAL: "30m" }).BACKUP_INTERVAL, 30 * 60 * 1000);
  assert.equal(parseConfig({ BACKUP_INTERVAL: "6h" }).BACKUP_INTERVAL, 6 * 60 * 60 * 1000);
  for (const bad of ["90", "1.5h", "6 h", "soon", "-1s"]) {
    assert.throws(
      () => parseConfig({ BACKUP_INTERVAL: bad }),
      /^Error: Invalid BACKUP_INTERVAL .*: expected a duration/,
    );
  }
  assert.throws(
    () => parseConfig({ BACKUP_INTERVAL: "0" }),
    /^Error: Invalid BACKUP_INTERVAL "0": expected at least 1s/,
  );
  assert.throws(() => parseConfig({ BACKUP_KEEP: "0" }), /^Error: Invalid BACKUP_KEEP "0": expected at least 1/);
});

Deno.test("the README's configuration table lists exactly the variables of --help, with their defaults as set", async () => {
  const readme = await Deno.readTextFile(new URL("../../README.md", import.meta.url));
  const rows = [...readme.matchAll(/^\| `([A-Z_]+)` +\| ([^|]+?) +\|/gm)].map(([, name, cell]) =>
    [name!, cell!] as const
  );
  assert.deepEqual(rows.map(([name]) => name).sort(), Object.keys(CONFIG_HELP).sort());
  const defaults = parseConfig({}) as Record<string, unknown>;
  for (const [name, cell] of rows) {
    const shown = cell.match(/^`([^`]*)`/)?.[1];
    const actual = defaults[name!];
    if (shown === undefined) assert.equal(actual, undefined, `${name} has a default the README does not show`);
    // As an operator would set it: a duration such as `24h`, since a bare number of milliseconds is refused.
    else {assert.deepEqual(
        parseConfig({ [name]: shown })[name as keyof Config],
        actual,
        `the README's default of ${name}`,
      );}
    if (actual !== undefined) {
      assert.match(CONFIG_HELP[name as keyof typeof CONFIG_HELP], /default/, `--help of ${name}`);
    }
  }
});
