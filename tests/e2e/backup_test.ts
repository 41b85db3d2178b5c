/**
 * End-to-end through `main.ts` processes: `backup now` and `restore` by the real CLI, scheduled backups and their
 * retention, a SIGKILL in the middle of a backup, two instances over one store writing one backup per interval, and
 * the modes of a backup's files.
 */
import assert from "node:assert/strict";
import { VOCAB_WORDS } from "../../tools/tiny_bert.ts";
import { mulberry32 } from "../../src/util/seeded_random.ts";
import { readManifest } from "../../src/backup/backup_manifest.ts";
import { fileChecksum } from "../../src/backup/jsonl_gz_file.ts";
import { startTestServer, temporaryDir, testModels } from "../_helpers.ts";
import {
  metricIn,
  metricsText,
  ok,
  PERMISSIONS,
  serverEnvironment,
  type ServerProcess,
  startServerProcess,
} from "../_server_process.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const BACKUP_NAME = /^quire-backup-\d{8}T\d{6}\.\d{3}Z$/;
const decoder = new TextDecoder();

/** Runs the CLI with `env`; returns its exit code and what it printed. */
async function runCli(env: Record<string, string>, ...args: string[]) {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...PERMISSIONS, MAIN, ...args],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
}

/** The generated test models and an external 8-dimensional model whose vectors clients send. */
async function modelsFile(): Promise<string> {
  const path = `${await temporaryDir("quire-backup-models-")}/models.json`;
  await Deno.writeTextFile(path, JSON.stringify({ ...await testModels(), "ext-8": { dimensions: 8, version: "e1" } }));
  return path;
}

/** An environment for a server process over a fresh store, backing up into its own directory. */
async function backupEnvironment(models: string, env: Record<string, string> = {}): Promise<Record<string, string>> {
  const base = await serverEnvironment(models);
  return {
    ...base,
    LOG_REQUESTS: "false",
    BACKUP_DIR: `${base.DENO_KV_PATH!.replace(/\/data\/quire\.kv$/, "")}/backups`,
    ...env,
  };
}

/** Calls `POST /manage` of `server` with another key and project. */
async function callAs(server: ServerProcess, key: string, body: Record<string, unknown>): Promise<Response> {
  return await fetch(server.url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-service-version": "v1", "x-project-key": key },
    body: JSON.stringify({ projectId: "default", ...body }),
  });
}

/** A search's answer without its timing, which is all that may differ between two servers. */
async function answer(response: Response): Promise<unknown> {
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  if (body !== null && typeof body === "object") delete body.tookMs;
  return body;
}

/** Sentences of whole words of the test vocabulary, `words` long. */
function text(random: () => number, words: number): string {
  return Array.from({ length: words }, () => VOCAB_WORDS[Math.floor(random() * VOCAB_WORDS.length)]).join(" ");
}

function vector(random: () => number): number[] {
  return Array.from({ length: 8 }, () => random() * 2 - 1);
}

async function backupNames(dir: string): Promise<{ backups: string[]; temporary: string[]; other: string[] }> {
  const backups: string[] = [];
  const temporary: string[] = [];
  const other: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (BACKUP_NAME.test(entry.name)) backups.push(entry.name);
    else if (entry.name.startsWith(".tmp-")) temporary.push(entry.name);
    else other.push(entry.name);
  }
  return { backups: backups.sort(), temporary, other: other.sort() };
}

/** Checks every file of the backup in `dir` against its manifest; returns the manifest. */
async function assertWhole(dir: string) {
  const manifest = await readManifest(dir);
  for (const file of manifest.files) {
    const actual = await fileChecksum(`${dir}/${file.path}`);
    assert.deepEqual(actual, { bytes: file.bytes, sha256: file.sha256 }, `${dir}/${file.path}`);
  }
  return manifest;
}

async function waitFor(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!await check()) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

Deno.test("a backup restored into a new store answers every search as the original did, and keys still work", async () => {
  const started = performance.now();
  const models = await modelsFile();
  const env = await backupEnvironment(models);
  const random = mulberry32(43);
  const searches: [string, Record<string, unknown>][] = [];
  const before: unknown[] = [];
  let acmeKey: string;
  let scopedKey: string;
  let defaultKey: string;
  let backupPath: string;
  {
    await using server = await startServerProcess(env);
    defaultKey = server.key;
    const acme = await runCli(env, "project", "create", "acme");
    assert.equal(acme.code, 0, acme.stderr);
    acmeKey = JSON.parse(acme.stdout).key;
    const scoped = await runCli(
      env,
      "project",
      "key",
      "create",
      "default",
      "--actions",
      "search",
      "--indexes",
      "long*",
    );
    assert.equal(scoped.code, 0, scoped.stderr);
    scopedKey = JSON.parse(scoped.stdout).key;

    // Long texts in passages of the generated model, with metadata.
    const longDocs = Array.from({ length: 60 }, (_, i) => ({
      id: `long-${i}`,
      text: text(random, 40 + Math.floor(random() * 160)),
      metadata: { group: i % 3, title: `doc ${i}` },
    }));
    await ok(server, {
      action: "createIndex",
      indexName: "long",
      passages: { maxTokens: 24, overlapTokens: 4 },
      docs: longDocs,
    });
    await ok(server, { action: "deleteDocs", indexName: "long", docIds: ["long-3", "long-4"] });
    await ok(server, { action: "addDocs", indexName: "long", docs: [{ id: "long-5", text: text(random, 90) }] });
    // Client vectors of an external model.
    const vectorDocs = Array.from({ length: 80 }, (_, i) => ({
      id: `v-${i}`,
      text: text(random, 12),
      vector: vector(random),
      metadata: { even: i % 2 === 0 },
    }));
    await ok(server, { action: "createIndex", indexName: "vectors", modelId: "ext-8", docs: vectorDocs });
    // Another project's index.
    const acmeDocs = Array.from({ length: 30 }, (_, i) => ({ id: `a-${i}`, text: text(random, 20) }));
    const created = await callAs(server, acmeKey, {
      action: "createIndex",
      projectId: "acme",
      indexName: "notes",
      docs: acmeDocs,
    });
    assert.equal(created.status, 200, await created.text());

    for (const mode of ["fulltext", "vector", "hybrid"]) {
      for (const query of [text(random, 3), text(random, 6)]) {
        searches.push(["default", { action: "search", indexName: "long", mode, query, limit: 20 }]);
        searches.push(["default", {
          action: "search",
          indexName: "long",
          mode,
          query,
          filter: { group: 1 },
          include: ["text", "metadata", "score", "passage", "highlights", "snippet"],
        }]);
        searches.push(["acme", { action: "search", projectId: "acme", indexName: "notes", mode, query }]);
      }
      const query = text(random, 4);
      searches.push(["default", { action: "search", indexName: "vectors", mode, query, vector: vector(random) }]);
      searches.push(["default", {
        action: "search",
        indexName: "vectors",
        mode,
        query,
        vector: vector(random),
        filter: { even: true },
        limit: 50,
      }]);
    }
    searches.push(["default", { action: "getDocs", indexName: "long", limit: 100 }]);
    searches.push(["default", { action: "getDocs", indexName: "vectors", limit: 100 }]);
    searches.push(["acme", { action: "getDocs", projectId: "acme", indexName: "notes", limit: 100 }]);
    for (const [project, body] of searches) {
      const found = await answer(await callAs(server, project === "acme" ? acmeKey : server.key, body));
      const items = Array.isArray(found) ? found : Object.values(found as object).find(Array.isArray) as unknown[];
      assert.ok(items.length > 0, `${JSON.stringify(body)} finds something`);
      before.push(found);
    }

    // While the server runs: the CLI's backup prints its directory, and only that, on stdout.
    const backup = await runCli(env, "backup", "now");
    assert.equal(backup.code, 0, backup.stderr);
    backupPath = backup.stdout.trim();
    assert.match(backupPath.split("/").at(-1)!, BACKUP_NAME);
    assert.equal(backupPath, `${env.BACKUP_DIR}/${backupPath.split("/").at(-1)}`);
    const manifest = await assertWhole(backupPath);
    assert.equal(manifest.counts.projects, 2);
    assert.equal(manifest.counts.indexes, 3);
    assert.equal(manifest.counts.documents, 58 + 80 + 30);
    assert.equal(manifest.counts.keys, 1);
    assert.equal(manifest.counts.key_hashes, 1);
  }

  const restoredEnv = await backupEnvironment(models);
  const restored = await runCli(restoredEnv, "restore", backupPath);
  assert.equal(restored.code, 0, restored.stderr);
  assert.match(restored.stdout, /^Restored 2 project\(s\), 3 index\(es\) and 168 document\(s\) from the backup of /);
  assert.equal(restored.stderr, "", "no progress line when stderr is piped");

  {
    const server = await startServerProcess(restoredEnv, defaultKey);
    try {
      const after: unknown[] = [];
      for (const [project, body] of searches) {
        after.push(await answer(await callAs(server, project === "acme" ? acmeKey : server.key, body)));
      }
      for (const [i, [, body]] of searches.entries()) assert.deepEqual(after[i], before[i], JSON.stringify(body));
      // The scoped key still works within its scope, and only there.
      const scopedSearch = await callAs(server, scopedKey, { ...searches[0]![1], projectId: "default" });
      assert.deepEqual(await answer(scopedSearch), before[0]);
      const outOfScope = await callAs(server, scopedKey, { action: "listIndexes", projectId: "default" });
      assert.equal(outOfScope.status, 403, await outOfScope.text());
      const wrongKey = await callAs(server, acmeKey, { action: "listIndexes", projectId: "default" });
      assert.equal(wrongKey.status, 403, await wrongKey.text());
    } finally {
      await server.stop();
    }
  }

  // A store that is not empty is refused, and a damaged backup too, before anything is written.
  const again = await runCli(restoredEnv, "restore", backupPath);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /^restore failed: Cannot restore into a store that is not empty: it holds project "acme"/);
  const damaged = `${await temporaryDir("quire-damaged-")}/backup`;
  await new Deno.Command("cp", { args: ["-r", backupPath, damaged] }).output();
  const records = await Deno.readFile(`${damaged}/records.jsonl.gz`);
  records[records.length - 10]! ^= 0xff;
  await Deno.writeFile(`${damaged}/records.jsonl.gz`, records);
  const fresh = await backupEnvironment(models);
  const refused = await runCli(fresh, "restore", damaged);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /is damaged: "records\.jsonl\.gz" has SHA-256 /);
  const listed = await runCli(fresh, "project", "list");
  assert.equal(listed.stdout, "", "nothing was restored");
  const nowhere = await runCli({ ...fresh, BACKUP_DIR: "" }, "backup", "now");
  assert.equal(nowhere.code, 1);
  assert.match(nowhere.stderr, /^backup now needs BACKUP_DIR/);
  console.log(
    `backup and restore: ${searches.length} searches and reads alike before and after, ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
});

Deno.test("scheduled backups keep the newest BACKUP_KEEP, touch nothing else, and a failing one is counted", async () => {
  const models = await modelsFile();
  const env = await backupEnvironment(models, { BACKUP_INTERVAL: "2s", BACKUP_KEEP: "2" });
  const dir = env.BACKUP_DIR!;
  await Deno.mkdir(`${dir}/quire-backup-not-a-backup`, { recursive: true });
  await Deno.writeTextFile(`${dir}/notes.txt`, "kept");
  {
    await using server = await startServerProcess(env);
    await ok(server, { action: "createIndex", indexName: "faq", docs: [{ id: "1", text: "the cat and the dog" }] });
    await waitFor("three scheduled backups", 15_000, async () => {
      return metricIn(await metricsText(server), 'quire_backups_total{result="ok"}') >= 3;
    });
    const metrics = await metricsText(server);
    assert.equal(metricIn(metrics, 'quire_backups_total{result="failed"}'), 0);
    const last = metricIn(metrics, "quire_last_backup_time_seconds");
    assert.ok(Math.abs(last - Date.now() / 1000) < 10, `last success ${last}`);
  }
  const { backups, temporary, other } = await backupNames(dir);
  assert.equal(backups.length, 2, backups.join(", "));
  assert.deepEqual(temporary, []);
  assert.deepEqual(other, ["notes.txt", "quire-backup-not-a-backup"]);
  for (const name of backups) assert.equal((await assertWhole(`${dir}/${name}`)).counts.indexes, 1);

  // A backup directory that cannot be made: every try fails, is counted and logged, and the server serves on.
  const blocked = await backupEnvironment(models, { BACKUP_INTERVAL: "1s" });
  await Deno.mkdir(blocked.BACKUP_DIR!.replace(/\/backups$/, ""), { recursive: true });
  await Deno.writeTextFile(blocked.BACKUP_DIR!, "a file where the directory should be");
  await using server = await startServerProcess(blocked);
  await waitFor("two failed backups", 10_000, async () => {
    return metricIn(await metricsText(server), 'quire_backups_total{result="failed"}') >= 2;
  });
  await ok(server, { action: "createIndex", indexName: "still", docs: [{ id: "1", text: "serving" }] });
  assert.equal(metricIn(await metricsText(server), 'quire_backups_total{result="ok"}'), 0);
});

Deno.test("kill -9 in the middle of a backup leaves only a .tmp- directory, which the next backup removes", async () => {
  const models = await modelsFile();
  const env = await backupEnvironment(models, { BACKUP_INTERVAL: "2s" });
  const dir = env.BACKUP_DIR!;
  const random = mulberry32(7);
  let key: string;
  {
    // Enough documents that a backup takes a while: filled before backups are turned on.
    await using server = await startServerProcess({ ...env, BACKUP_DIR: "" });
    key = server.key;
    for (let batch = 0; batch < 4; batch++) {
      const docs = Array.from({ length: 2_500 }, (_, i) => ({
        id: `d-${batch}-${i}`,
        text: text(random, 150),
        vector: vector(random),
      }));
      await ok(server, { action: batch === 0 ? "createIndex" : "addDocs", indexName: "big", modelId: "ext-8", docs });
    }
  }
  const server = await startServerProcess(env, key);
  let seen: Awaited<ReturnType<typeof backupNames>>;
  try {
    const deadline = Date.now() + 10_000;
    for (;;) {
      seen = await backupNames(dir).catch(() => ({ backups: [], temporary: [], other: [] }));
      if (seen.temporary.length > 0 || seen.backups.length > 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  } finally {
    await server.stop("SIGKILL");
  }
  assert.deepEqual(seen!.backups, [], "the backup was still being written when seen");
  const killed = await backupNames(dir);
  assert.deepEqual(killed.backups, [], "no backup under a final name after the kill");
  assert.equal(killed.temporary.length, 1, "the killed backup's temporary directory");

  await using restarted = await startServerProcess(env, key);
  // The killed instance's lease runs out first (5 s at most at this interval).
  await waitFor("a backup after the restart", 20_000, async () => (await backupNames(dir)).backups.length > 0);
  const after = await backupNames(dir);
  assert.deepEqual(after.temporary, [], "the next backup removed the killed one's temporary directory");
  const manifest = await assertWhole(`${dir}/${after.backups[0]}`);
  assert.equal(manifest.counts.documents, 10_000);
  assert.equal((await (await restarted.call({ action: "getIndex", indexName: "big" })).json()).docCount, 10_000);
});

Deno.test("two instances over one store write one backup per interval between them", async () => {
  const models = await modelsFile();
  const env = await backupEnvironment(models, { BACKUP_INTERVAL: "2s", BACKUP_KEEP: "100" });
  const first = await startServerProcess(env);
  await using a = first;
  await using b = await startServerProcess(env, first.key);
  await ok(a, { action: "createIndex", indexName: "faq", docs: [{ id: "1", text: "the cat and the dog" }] });
  const started = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 7_000));
  const [textA, textB] = [await metricsText(a), await metricsText(b)];
  const elapsed = Date.now() - started;
  const { backups } = await backupNames(env.BACKUP_DIR!);
  const written = metricIn(textA, 'quire_backups_total{result="ok"}') +
    metricIn(textB, 'quire_backups_total{result="ok"}');
  assert.equal(written, backups.length, "each backup was written by one instance");
  // The first may come at the start of either; then one per interval at most.
  assert.ok(backups.length >= 3 && backups.length <= Math.floor(elapsed / 2_000) + 2, `${backups.length} backups`);
  const times = backups.map((name) =>
    Date.parse(
      name.slice("quire-backup-".length).replace(
        /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})/,
        "$1-$2-$3T$4:$5:$6",
      ),
    )
  );
  for (let i = 1; i < times.length; i++) {
    assert.ok(times[i]! - times[i - 1]! >= 1_990, `backups ${backups[i - 1]} and ${backups[i]} within one interval`);
  }
  assert.equal(metricIn(textA, 'quire_backups_total{result="failed"}'), 0);
  assert.equal(metricIn(textB, 'quire_backups_total{result="failed"}'), 0);
});

/** The permission bits of every directory and file under `path`, `path` included, by path. */
async function modesUnder(path: string): Promise<Map<string, { directory: boolean; mode: number }>> {
  const modes = new Map<string, { directory: boolean; mode: number }>();
  const info = await Deno.stat(path);
  modes.set(path, { directory: info.isDirectory, mode: info.mode! & 0o777 });
  if (info.isDirectory) {
    for await (const entry of Deno.readDir(path)) {
      for (const [inner, mode] of await modesUnder(`${path}/${entry.name}`)) modes.set(inner, mode);
    }
  }
  return modes;
}

Deno.test("a backup is for its owner's eyes only, whatever the umask; a restore of a damaged one writes nothing", async () => {
  let kvPath: string;
  {
    await using server = await startTestServer();
    await server.ok({ action: "createIndex", indexName: "faq", docs: [{ id: "1", text: "a confidential report" }] });
    kvPath = server.kvPath;
  }
  const backupDir = `${await temporaryDir("quire-private-")}/backups`;
  // The widest umask: without modes of its own, a backup would be readable and writable by everyone.
  const backedUp = await new Deno.Command("sh", {
    args: ["-c", 'umask 000 && exec "$0" "$@"', Deno.execPath(), "run", ...PERMISSIONS, MAIN, "backup", "now"],
    env: { DENO_KV_PATH: kvPath, BACKUP_DIR: backupDir },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(backedUp.code, 0, decoder.decode(backedUp.stderr));
  const backupPath = decoder.decode(backedUp.stdout).trim();
  const modes = await modesUnder(backupDir);
  assert.ok(modes.has(`${backupPath}/records.jsonl.gz`) && modes.has(`${backupPath}/indexes/000001.jsonl.gz`));
  for (const [path, { directory, mode }] of modes) {
    assert.equal(mode.toString(8), directory ? "700" : "600", path);
  }

  const records = await Deno.readFile(`${backupPath}/records.jsonl.gz`);
  records[records.length - 10]! ^= 0xff;
  await Deno.writeFile(`${backupPath}/records.jsonl.gz`, records);
  const restoredPath = `${await temporaryDir("quire-restored-")}/quire.kv`;
  const refused = await runCli({ DENO_KV_PATH: restoredPath }, "restore", backupPath);
  assert.equal(refused.code, 1);
  assert.match(
    refused.stderr,
    /^restore failed: The backup in ".+" is damaged: "records\.jsonl\.gz" has SHA-256 [0-9a-f]{64} \(\d+ bytes\), the manifest says [0-9a-f]{64} \(\d+ bytes\)\n$/,
  );
  const restored = await Deno.openKv(restoredPath);
  try {
    assert.deepEqual(await Array.fromAsync(restored.list({ prefix: [] })), [], "the store is as empty as it was");
  } finally {
    restored.close();
  }
});
