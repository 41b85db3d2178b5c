/**
 * Many instances over one store, checked as a user would: three real server processes over one Deno KV file, driven
 * only through HTTP on loopback, the project CLI and signals. Catch-up from the change log, what one instance sees of
 * another's writes and within what time, queued jobs that outlive a SIGKILL of their instance, no 5xx under write
 * contention, and the `SEARCH_CACHE_MB` memory budget.
 */
import assert from "node:assert/strict";
import { PERMISSIONS, serverEnvironment, type ServerProcess, startServerProcess } from "../_server_process.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const ROOT = new URL("../..", import.meta.url).pathname;
/** Set explicitly in every test's environment, since the visibility windows below rely on it. */
const METADATA_CACHE_MS = 250;
/** What a change made elsewhere may take, on top of `METADATA_CACHE_MS`, to show (request time, a busy CI machine). */
const SLACK_MS = 500;
const MIB = 1024 * 1024;

type Json = Record<string, unknown>;

interface Reply<T = Json> {
  status: number;
  headers: Headers;
  body: T;
  /** The body as received, for messages. */
  text: string;
}

interface IndexView {
  name: string;
  status: string;
  docCount: number;
  version: string;
  progress?: { done: number; total: number };
  memoryBytes?: unknown;
  error?: string;
}

interface SearchResult {
  hits: { id: string; text?: string }[];
  total: number;
}

interface Doc {
  id: string;
  text: string;
  metadata?: Json;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A deterministic source of numbers in [0, 1). */
function seeded(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
}

const POOL = [
  "river",
  "storm",
  "forest",
  "music",
  "apple",
  "train",
  "science",
  "lantern",
  "meadow",
  "copper",
  "harbor",
  "violet",
  "cinder",
  "marble",
  "orchid",
  "falcon",
];

/** `count` words of the pool, varied by `seed`; never one of the unique words the tests search for. */
function words(seed: number, count: number): string {
  return Array.from({ length: count }, (_, k) => POOL[(seed * 7 + k * 3 + (k * k) % 5) % POOL.length]).join(" ");
}

/** One server process of a cluster, stopped at most once. */
class Instance {
  #stopped: Promise<number> | undefined;

  constructor(readonly name: string, readonly server: ServerProcess) {}

  get url(): string {
    return this.server.url;
  }

  get pid(): number {
    return this.server.pid;
  }

  stop(signal: Deno.Signal = "SIGTERM"): Promise<number> {
    this.#stopped ??= this.server.stop(signal);
    return this.#stopped;
  }
}

/** Three server processes over one store; disposing stops those still running and removes the store's directory. */
class Cluster implements AsyncDisposable {
  constructor(
    readonly env: Record<string, string>,
    readonly instances: [Instance, Instance, Instance],
    readonly key: string,
  ) {}

  async [Symbol.asyncDispose](): Promise<void> {
    await Promise.allSettled(this.instances.map((instance) => instance.stop()));
    const dir = this.env.DENO_KV_PATH!.replace(/\/data\/quire\.kv$/, "");
    if (/quire-main-[^/]*$/.test(dir)) await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/**
 * One environment (one KV file), then three processes on it: A first (it prints the key of `default`), then B and C
 * with that key. `perInstance` adds variables to one process's environment. Each must answer `/healthz` with its pid.
 */
async function startCluster(
  common: Record<string, string> = {},
  perInstance: [Record<string, string>, Record<string, string>, Record<string, string>] = [{}, {}, {}],
): Promise<Cluster> {
  const env = {
    ...await serverEnvironment(),
    METADATA_CACHE_MS: String(METADATA_CACHE_MS),
    LOG_REQUESTS: "false",
    SHUTDOWN_TIMEOUT_MS: "3000",
    ...common,
  };
  const started: Instance[] = [];
  try {
    const a = new Instance("A", await startServerProcess({ ...env, ...perInstance[0] }));
    started.push(a);
    assert.match(a.server.key, /^qk_/, "A, the first process on a fresh store, prints the key of the default project");
    const rest = await Promise.allSettled(
      (["B", "C"] as const).map(async (name, i) =>
        new Instance(name, await startServerProcess({ ...env, ...perInstance[i + 1] }, a.server.key))
      ),
    );
    for (const result of rest) if (result.status === "fulfilled") started.push(result.value);
    for (const result of rest) if (result.status === "rejected") throw result.reason;
    for (const instance of started) {
      const health = await getJson(instance, "/healthz");
      assert.equal(health.status, 200, `${instance.name} /healthz: ${health.text}`);
      assert.equal(health.body.status, "ok", `${instance.name} /healthz: ${health.text}`);
      assert.equal(typeof health.body.process, "number", `${instance.name} /healthz names its process: ${health.text}`);
      assert.equal(health.body.pid, instance.pid, `${instance.name} /healthz names its own pid: ${health.text}`);
    }
    return new Cluster(env, started as [Instance, Instance, Instance], a.server.key);
  } catch (error) {
    await Promise.allSettled(started.map((instance) => instance.stop()));
    throw error;
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** `POST /manage` as the `default` project with `key`; the body is always read whole. */
async function post<T = Json>(instance: Instance, body: Json, key: string): Promise<Reply<T>> {
  const response = await fetch(instance.url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-service-version": "v1", "x-project-key": key },
    body: JSON.stringify({ projectId: "default", ...body }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: parse(text) as T, text };
}

async function getJson<T = Json>(instance: Instance, path: string): Promise<Reply<T>> {
  const response = await fetch(new URL(path, instance.url));
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: parse(text) as T, text };
}

/**
 * Calls `body` on `instance` and asserts a 200; returns the parsed body. A 503 with `Retry-After` (another process
 * held the store's lock past every retry, as right after a SIGKILL) is retried as the README tells clients to.
 */
async function ok<T = Json>(cluster: Cluster, instance: Instance, body: Json, key = cluster.key): Promise<T> {
  let reply = await post<T>(instance, body, key);
  for (let retry = 0; retry < 5 && reply.status === 503 && reply.headers.has("retry-after"); retry++) {
    await new Promise((resolve) => setTimeout(resolve, Number(reply.headers.get("retry-after")) * 1000));
    reply = await post<T>(instance, body, key);
  }
  assert.equal(reply.status, 200, `${body.action} on ${instance.name}: ${reply.status} ${reply.text.slice(0, 500)}`);
  return reply.body;
}

/** The sum of the samples of metric `name` whose labels include `labels`, in Prometheus text; 0 when there is none. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const match = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/);
    if (match === null || match[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const label of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      found[label[1]!] = label[2]!;
    }
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) total += Number(match[3]);
  }
  return total;
}

async function metrics(instance: Instance): Promise<string> {
  const reply = await getJson<string>(instance, "/metrics");
  assert.equal(reply.status, 200, `${instance.name} GET /metrics over loopback: ${reply.text.slice(0, 200)}`);
  return reply.text;
}

interface Loads {
  snapshot: number;
  catchup: number;
  full: number;
}

async function loads(instance: Instance): Promise<Loads> {
  const text = await metrics(instance);
  const kind = (kind: string) => sample(text, "quire_index_loads_total", { kind });
  return { snapshot: kind("snapshot") + kind("local"), catchup: kind("catchup"), full: kind("full") };
}

/**
 * Reads with `read` until `done` holds or `deadline` (a `performance.now()` time) passes, at least once; bounded in
 * count too. Returns the last value and whether it met `done`.
 */
async function pollUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  deadline: number,
  intervalMs = 25,
): Promise<{ value: T; met: boolean; at: number }> {
  let value = await read();
  for (let attempt = 0; attempt < 2000; attempt++) {
    if (done(value)) return { value, met: true, at: performance.now() };
    if (performance.now() >= deadline) break;
    await sleep(intervalMs);
    value = await read();
  }
  return { value, met: done(value), at: performance.now() };
}

const getIndex = (cluster: Cluster, instance: Instance, indexName: string) =>
  ok<IndexView>(cluster, instance, { action: "getIndex", indexName });

/** A full-text search of exact words: these tests name documents by unique words. */
const fulltext = (cluster: Cluster, instance: Instance, indexName: string, query: string) =>
  ok<SearchResult>(cluster, instance, {
    action: "search",
    indexName,
    query,
    mode: "fulltext",
    limit: 100,
    typoTolerance: false,
    prefix: false,
  });

const sortedIds = (items: { id: string }[]) => items.map((item) => item.id).sort();

Deno.test("a write on one instance reaches another's loaded index by catch-up from the change log, at once", async () => {
  await using cluster = await startCluster();
  const [a, b] = cluster.instances;
  const docs = Array.from({ length: 300 }, (_, i) => ({ id: `d${i}`, text: `${words(i, 12)} number${i}` }));
  await ok(cluster, a, { action: "createIndex", indexName: "shared", docs });

  const beforeLoad = await loads(b);
  assert.equal((await fulltext(cluster, b, "shared", "number7")).hits[0]?.id, "d7", "B searches A's new index");
  assert.equal((await fulltext(cluster, b, "shared", "zephyr")).total, 0);
  const loaded = await loads(b);
  assert.ok(
    loaded.snapshot + loaded.full >= beforeLoad.snapshot + beforeLoad.full + 1,
    `B's first search loads the index by snapshot or full: before ${JSON.stringify(beforeLoad)}, after ${
      JSON.stringify(loaded)
    }`,
  );

  const fresh = Array.from({ length: 10 }, (_, i) => ({ id: `new${i}`, text: `a zephyr over the meadow ${i}` }));
  await ok(cluster, a, { action: "addDocs", indexName: "shared", docs: fresh });
  const afterWrite = await loads(b);
  const found = await fulltext(cluster, b, "shared", "zephyr");
  const afterSearch = await loads(b);
  assert.deepEqual(sortedIds(found.hits), sortedIds(fresh), "B finds A's acknowledged docs at once");
  assert.equal(found.total, fresh.length);
  const change = JSON.stringify({ afterWrite, afterSearch });
  assert.ok(afterSearch.catchup >= afterWrite.catchup + 1, `B caught up from the log: ${change}`);
  assert.equal(afterSearch.full, afterWrite.full, `B did not reload the index in full: ${change}`);
  assert.equal(afterSearch.snapshot, afterWrite.snapshot, `B did not reload the index from its snapshot: ${change}`);
});

Deno.test(
  "a write on one instance: search and getDocs on the others see it at once, getIndex and listIndexes within METADATA_CACHE_MS",
  async () => {
    await using cluster = await startCluster();
    const [a, b, c] = cluster.instances;
    const docs = Array.from({ length: 20 }, (_, i) => ({ id: `d${i}`, text: words(i, 8) }));
    await ok(cluster, a, { action: "createIndex", indexName: "seen", docs });
    // B and C load and cache what they can before the write, so that a stale cache would show.
    for (const instance of [b, c]) {
      assert.equal((await fulltext(cluster, instance, "seen", "quasar")).total, 0);
      assert.equal((await getIndex(cluster, instance, "seen")).docCount, 20);
      const listed = await ok<IndexView[]>(cluster, instance, { action: "listIndexes" });
      assert.equal(listed.find((view) => view.name === "seen")?.docCount, 20);
    }

    const fresh = Array.from({ length: 5 }, (_, i) => ({ id: `q${i}`, text: `quasar light ${i}` }));
    await ok(cluster, a, { action: "addDocs", indexName: "seen", docs: fresh });
    const acknowledged = performance.now();
    for (const instance of [b, c]) {
      const found = await fulltext(cluster, instance, "seen", "quasar");
      assert.deepEqual(sortedIds(found.hits), sortedIds(fresh), `search on ${instance.name} sees the write at once`);
      const read = await ok<Doc[]>(cluster, instance, {
        action: "getDocs",
        indexName: "seen",
        options: { docIds: fresh.map((doc) => doc.id) },
      });
      assert.deepEqual(read, fresh, `getDocs on ${instance.name} sees the write at once`);
    }
    const deadline = acknowledged + METADATA_CACHE_MS + SLACK_MS;
    for (const instance of [b, c]) {
      const viewed = await pollUntil(
        () => getIndex(cluster, instance, "seen"),
        (view) => view.docCount === 25,
        deadline,
      );
      assert.ok(
        viewed.met,
        `getIndex on ${instance.name} shows docCount 25 within ${METADATA_CACHE_MS} ms + ${SLACK_MS} ms: ${
          JSON.stringify(viewed.value)
        }`,
      );
      const listed = await pollUntil(
        () => ok<IndexView[]>(cluster, instance, { action: "listIndexes" }),
        (views) => views.find((view) => view.name === "seen")?.docCount === 25,
        deadline,
      );
      assert.ok(listed.met, `listIndexes on ${instance.name} shows docCount 25: ${JSON.stringify(listed.value)}`);
    }

    await ok(cluster, a, { action: "deleteDocs", indexName: "seen", docIds: ["q0", "q1"] });
    for (const instance of [b, c]) {
      const found = await fulltext(cluster, instance, "seen", "quasar");
      assert.deepEqual(sortedIds(found.hits), ["q2", "q3", "q4"], `search on ${instance.name} sees the delete at once`);
      const read = await ok<Doc[]>(cluster, instance, {
        action: "getDocs",
        indexName: "seen",
        options: { docIds: ["q0", "q1", "q2"] },
      });
      assert.deepEqual(sortedIds(read), ["q2"], `getDocs on ${instance.name} sees the delete at once`);
    }
  },
);

Deno.test(
  "after `project rotate-key` on the CLI, all instances refuse the old key within METADATA_CACHE_MS and accept the new one",
  async () => {
    await using cluster = await startCluster();
    const oldKey = cluster.key;
    // Every instance has the project's record cached with the old key.
    for (const instance of cluster.instances) await ok(cluster, instance, { action: "listIndexes" }, oldKey);

    const cli = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...PERMISSIONS, MAIN, "project", "rotate-key", "default"],
      env: cluster.env,
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(cli.stdout);
    assert.equal(cli.code, 0, `rotate-key: ${stdout} ${new TextDecoder().decode(cli.stderr)}`);
    const printed = stdout.split("\n").map(parse).find((line): line is Json =>
      typeof line === "object" && line !== null && "key" in line
    );
    assert.ok(printed !== undefined, `rotate-key prints {"projectId","key"}: ${stdout}`);
    assert.equal(printed.projectId, "default");
    const newKey = printed.key;
    assert.ok(typeof newKey === "string" && newKey.startsWith("qk_") && newKey !== oldKey, `a new key: ${stdout}`);

    const deadline = performance.now() + METADATA_CACHE_MS + SLACK_MS;
    await Promise.all(cluster.instances.map(async (instance) => {
      const list = (key: string) => post(instance, { action: "listIndexes" }, key);
      const refused = await pollUntil(() => list(oldKey), (reply) => reply.status === 403, deadline);
      assert.equal(
        refused.value.status,
        403,
        `${instance.name} refuses the old key within ${METADATA_CACHE_MS} ms + ${SLACK_MS} ms: ${refused.value.text}`,
      );
      const accepted = await pollUntil(() => list(newKey), (reply) => reply.status === 200, deadline);
      assert.equal(accepted.value.status, 200, `${instance.name} accepts the new key: ${accepted.value.text}`);
      assert.equal((await list(oldKey)).status, 403, `${instance.name} keeps refusing the old key`);
    }));
  },
);

Deno.test(
  "deleteIndex on one instance: search on another answers 404 at once, getIndex within METADATA_CACHE_MS",
  async () => {
    await using cluster = await startCluster();
    const [a, b, c] = cluster.instances;
    const docs = Array.from({ length: 10 }, (_, i) => ({ id: `d${i}`, text: words(i, 6) }));
    await ok(cluster, a, { action: "createIndex", indexName: "doomed", docs });
    for (const instance of [b, c]) {
      assert.ok((await fulltext(cluster, instance, "doomed", "river")).total > 0);
      assert.equal((await getIndex(cluster, instance, "doomed")).docCount, 10);
    }

    assert.equal(await ok(cluster, a, { action: "deleteIndex", indexName: "doomed" }), true);
    const deleted = performance.now();
    for (const instance of [b, c]) {
      const search = await post(instance, { action: "search", indexName: "doomed", query: "river" }, cluster.key);
      assert.equal(search.status, 404, `search on ${instance.name} answers 404 at once: ${search.text}`);
    }
    const read = await post(c, { action: "getDocs", indexName: "doomed" }, cluster.key);
    assert.equal(read.status, 404, `getDocs on C answers 404 at once: ${read.text}`);
    for (const instance of [b, c]) {
      const viewed = await pollUntil(
        () => post(instance, { action: "getIndex", indexName: "doomed" }, cluster.key),
        (reply) => reply.status === 404,
        deleted + METADATA_CACHE_MS + SLACK_MS,
      );
      assert.equal(
        viewed.value.status,
        404,
        `getIndex on ${instance.name} answers 404 within ${METADATA_CACHE_MS} ms + ${SLACK_MS} ms: ${viewed.value.text}`,
      );
    }
  },
);

const QUEUED_DOCS = 3000;
const INITIAL_DOCS = 40;

/** An index of {@link INITIAL_DOCS} docs on `instance`, then a queued addDocs of {@link QUEUED_DOCS} new ids: 202. */
async function startQueuedWrite(cluster: Cluster, instance: Instance, indexName: string): Promise<string[]> {
  const initial = Array.from({ length: INITIAL_DOCS }, (_, i) => ({ id: `old${i}`, text: words(i, 5) }));
  await ok(cluster, instance, { action: "createIndex", indexName, docs: initial });
  const fresh = Array.from({ length: QUEUED_DOCS }, (_, i) => ({ id: `new${i}`, text: `short ${POOL[i % 16]} ${i}` }));
  const reply = await post<IndexView>(
    instance,
    { action: "addDocs", indexName, docs: fresh, options: { wait: false } },
    cluster.key,
  );
  assert.equal(reply.status, 202, `addDocs with wait: false: ${reply.text.slice(0, 300)}`);
  assert.equal(reply.body.status, "Updating", reply.text.slice(0, 300));
  return fresh.map((doc) => doc.id);
}

/** Asserts that the queued write landed exactly once, read from `reader` and `docsReader`. */
async function assertLandedOnce(
  cluster: Cluster,
  view: IndexView,
  docsReader: Instance,
  indexName: string,
  ids: string[],
): Promise<void> {
  assert.equal(view.docCount, INITIAL_DOCS + ids.length, `docCount is exact: ${JSON.stringify(view)}`);
  assert.equal(view.version, "2", `the queued write landed as one revision: ${JSON.stringify(view)}`);
  const read = await ok<Doc[]>(cluster, docsReader, { action: "getDocs", indexName, options: { docIds: ids } });
  const counts = new Map<string, number>();
  for (const doc of read) counts.set(doc.id, (counts.get(doc.id) ?? 0) + 1);
  const missing = ids.filter((id) => !counts.has(id));
  const doubled = [...counts].filter(([, count]) => count > 1).map(([id]) => id);
  assert.deepEqual(
    { missing: missing.slice(0, 10), doubled: doubled.slice(0, 10) },
    { missing: [], doubled: [] },
    `getDocs on ${docsReader.name} returns every new id exactly once (${missing.length} missing, ${doubled.length} doubled)`,
  );
}

Deno.test("a queued addDocs (wait: false) with no kill lands exactly once, as every instance shows", async () => {
  await using cluster = await startCluster();
  const [a, b, c] = cluster.instances;
  const ids = await startQueuedWrite(cluster, a, "calm");
  const ready = await pollUntil(
    () => getIndex(cluster, b, "calm"),
    (view) => view.status !== "Updating",
    performance.now() + 30_000,
    100,
  );
  assert.equal(ready.value.status, "Ready", `the job finished: ${JSON.stringify(ready.value)}`);
  await assertLandedOnce(cluster, ready.value, c, "calm", ids);
});

Deno.test(
  "a queued addDocs survives a SIGKILL of its instance: progress shows elsewhere, another instance finishes it within 10 s, exactly once",
  async () => {
    await using cluster = await startCluster();
    const [a, b, c] = cluster.instances;
    const ids = await startQueuedWrite(cluster, a, "jobs");
    // Kill A while its job runs: once it has embedded something, or after 300 ms (the job takes about a second here).
    const submitted = performance.now();
    const running = await pollUntil(
      () => getIndex(cluster, a, "jobs"),
      (view) => view.status !== "Updating" || (view.progress?.done ?? 0) > 0 || performance.now() - submitted > 300,
      submitted + 3000,
      20,
    );
    assert.equal(
      running.value.status,
      "Updating",
      `the test needs the job still running at the kill; it was already ${JSON.stringify(running.value)}`,
    );
    const killed = performance.now();
    await a.stop("SIGKILL");

    const seen: IndexView[] = [];
    const ready = await pollUntil(
      async () => {
        const view = await getIndex(cluster, b, "jobs");
        seen.push(view);
        return view;
      },
      (view) => view.status !== "Updating",
      killed + 15_000,
      100,
    );
    const readyAfterMs = ready.at - killed;
    const updating = seen.filter((view) => view.status === "Updating");
    console.log(
      `queued job: killed at ${JSON.stringify(running.value.progress)}, B showed progress ${
        [...new Set(updating.map((view) => view.progress?.done))].join(", ")
      }, ${ready.value.status} ${Math.round(readyAfterMs)} ms after the kill`,
    );
    assert.ok(updating.length > 0, `B saw the job Updating after the kill: ${JSON.stringify(seen.slice(0, 3))}`);
    for (const view of updating) {
      const progress = view.progress;
      assert.ok(
        progress !== undefined && progress.total === QUEUED_DOCS && progress.done >= 0 &&
          progress.done <= progress.total,
        `B shows the job's progress {done, total}: ${JSON.stringify(view)}`,
      );
    }
    assert.equal(ready.value.status, "Ready", `the job finished on another instance: ${JSON.stringify(ready.value)}`);
    assert.ok(readyAfterMs <= 10_000, `Ready ${Math.round(readyAfterMs)} ms after the kill (at most 10000)`);
    await assertLandedOnce(cluster, ready.value, c, "jobs", ids);
  },
);

Deno.test(
  "3 instances × 8 concurrent writers with one SIGKILLed halfway answer only 200, 409 or 503 and lose no acknowledged write",
  async () => {
    await using cluster = await startCluster();
    const [a, b, c] = cluster.instances;
    const indexName = "contended";
    await ok(cluster, a, { action: "createIndex", indexName, docs: [] });
    const WRITERS = 8;
    const DURATION_MS = 8000;
    const victim = c;
    const statuses = new Map<number, number>();
    const violations: string[] = [];
    const acknowledged = new Set<string>();
    const sent = new Set<string>();
    const unacknowledged: string[] = [];
    let requests = 0;
    let connectionErrors = 0;
    let killedAt: number | undefined;

    const end = performance.now() + DURATION_MS;
    const writer = async (instance: Instance, number: number) => {
      const next = seeded(1000 * instance.name.charCodeAt(0) + number);
      for (let n = 0; n < 10_000 && performance.now() < end; n++) {
        const deleting = unacknowledged.length > 0 && next() < 0.2;
        const docs = deleting ? [] : Array.from({ length: 1 + Math.floor(next() * 5) }, (_, k) => ({
          id: `${instance.name}${number}-${n}-${k}`,
          text: `${words(n + k, 4)} writer ${number}`,
        }));
        const body = deleting
          ? {
            action: "deleteDocs",
            indexName,
            docIds: [
              unacknowledged[Math.floor(next() * unacknowledged.length)]!,
              `ghost-${instance.name}${number}-${n}`,
            ],
          }
          : { action: "addDocs", indexName, docs };
        for (const doc of docs) sent.add(doc.id);
        let reply: Reply;
        try {
          reply = await post(instance, body, cluster.key);
        } catch (error) {
          unacknowledged.push(...docs.map((doc) => doc.id));
          if (instance === victim && killedAt !== undefined) {
            connectionErrors++;
            await sleep(100);
          } else {
            violations.push(`${body.action} on ${instance.name}: ${error}`);
            await sleep(100);
          }
          continue;
        }
        requests++;
        statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
        if (![200, 409, 503].includes(reply.status)) {
          violations.push(`${body.action} on ${instance.name}: ${reply.status} ${reply.text.slice(0, 300)}`);
        }
        if (reply.status === 503 && reply.headers.get("retry-after") === null) {
          violations.push(`${body.action} on ${instance.name}: 503 without retry-after: ${reply.text.slice(0, 300)}`);
        }
        if (deleting) continue;
        if (reply.status === 200) {
          for (const doc of docs) acknowledged.add(doc.id);
          if (reply.body.added !== docs.length) {
            violations.push(`addDocs of ${docs.length} fresh ids on ${instance.name} answered ${reply.text}`);
          }
        } else {
          unacknowledged.push(...docs.map((doc) => doc.id));
        }
      }
    };
    const killer = (async () => {
      await sleep(DURATION_MS / 2);
      killedAt = performance.now();
      await victim.stop("SIGKILL");
    })();
    await Promise.all([
      killer,
      ...cluster.instances.flatMap((instance) =>
        Array.from({ length: WRITERS }, (_, number) => writer(instance, number))
      ),
    ]);

    const stored = await ok<Doc[]>(cluster, a, { action: "getDocs", indexName });
    const storedIds = new Set(stored.map((doc) => doc.id));
    const lost = [...acknowledged].filter((id) => !storedIds.has(id));
    const unknown = [...storedIds].filter((id) => !sent.has(id));
    const counted = await pollUntil(
      () => getIndex(cluster, b, indexName),
      (view) => view.docCount === storedIds.size,
      performance.now() + METADATA_CACHE_MS + SLACK_MS,
    );
    const statusText = JSON.stringify(Object.fromEntries([...statuses].sort(([x], [y]) => x - y)));
    console.log(
      `contention: 3 instances × ${WRITERS} writers, ${requests} requests, statuses ${statusText}, ` +
        `${connectionErrors} connection errors after the kill, ${acknowledged.size} acknowledged ids, ` +
        `${lost.length} lost acknowledged writes`,
    );
    assert.deepEqual(violations.slice(0, 10), [], `${violations.length} responses broke the rules`);
    assert.ok(acknowledged.size > 0, "some writes were acknowledged");
    assert.deepEqual(lost.slice(0, 10), [], `${lost.length} acknowledged ids are missing`);
    assert.deepEqual(unknown.slice(0, 10), [], "nothing is stored that no writer sent");
    assert.equal(stored.length, storedIds.size, "getDocs lists each id once");
    assert.equal(counted.value.docCount, storedIds.size, "docCount equals the number of distinct ids stored");
  },
);

Deno.test(
  "an index larger than SEARCH_CACHE_MB answers search with 507 naming the budget, and that instance goes on serving",
  async () => {
    await using cluster = await startCluster({}, [{}, { SEARCH_CACHE_MB: "1" }, {}]);
    const [a, small] = cluster.instances;
    const docs = Array.from({ length: 3000 }, (_, i) => ({ id: `d${i}`, text: `${words(i, 49)} big${i}` }));
    await ok(cluster, a, { action: "createIndex", indexName: "big", docs });
    await ok(cluster, a, { action: "createIndex", indexName: "tiny", docs: [{ id: "t", text: "a small lantern" }] });

    assert.equal((await fulltext(cluster, a, "big", "big7")).hits[0]?.id, "d7", "the default instance searches it");
    const held = await getIndex(cluster, a, "big");
    assert.equal(typeof held.memoryBytes, "number", `getIndex has a numeric memoryBytes: ${JSON.stringify(held)}`);
    assert.ok(
      (held.memoryBytes as number) > 1 * MIB,
      `the test's index must need more than 1 MiB of search state: ${JSON.stringify(held)}`,
    );

    for (let attempt = 0; attempt < 2; attempt++) {
      const refused = await post(
        small,
        { action: "search", indexName: "big", query: "big7", mode: "fulltext" },
        cluster.key,
      );
      assert.equal(refused.status, 507, `search on the SEARCH_CACHE_MB=1 instance: ${refused.status} ${refused.text}`);
      assert.match(refused.headers.get("content-type") ?? "", /application\/json/);
      assert.equal(typeof refused.body.error, "string", refused.text);
      assert.match(refused.body.error as string, /SEARCH_CACHE_MB/, refused.text);
      assert.equal(refused.body.action, "search", refused.text);

      const health = await getJson(small, "/healthz");
      assert.equal(health.status, 200, `the SEARCH_CACHE_MB=1 instance is alive: ${health.text}`);
      assert.equal(health.body.pid, small.pid);
      assert.equal((await getIndex(cluster, small, "big")).docCount, 3000);
      assert.equal((await fulltext(cluster, small, "tiny", "lantern")).total, 1, "a small index still searches");
    }
  },
);

Deno.test(
  "with SEARCH_CACHE_MB=8, round-robin search over three indexes that do not fit together stays correct and within the budget",
  async () => {
    const BUDGET_MIB = 8;
    await using cluster = await startCluster({}, [{}, { SEARCH_CACHE_MB: String(BUDGET_MIB) }, {}]);
    const [a, bounded] = cluster.instances;
    const names = ["north", "south", "east"];
    for (const name of names) {
      // Short texts (cheap to embed) and a long note in metadata, which is held in memory for hits: about 3-4 MiB.
      const docs = Array.from({ length: 1500 }, (_, i) => ({
        id: `${name}-${i}`,
        text: `${words(i, 14)} ${name}w${i}`,
        metadata: { note: words(i + 1, 140).slice(0, 800) },
      }));
      await ok(cluster, a, { action: "createIndex", indexName: name, docs });
    }
    // The bounded instance then loads from snapshots and has none of its own to write. A snapshot it wrote would read
    // its index in the background and could evict the one just searched, between a search and its getIndex.
    const written = await pollUntil(
      () => metrics(a),
      (text) => sample(text, "quire_snapshots_written_total") >= names.length,
      performance.now() + 30_000,
    );
    assert.ok(written.met, `the creating instance wrote the three snapshots: ${written.value}`);

    const alone = new Map<string, number>();
    for (let round = 0; round < 10; round++) {
      for (const name of names) {
        const i = round * 97 + 13;
        const found = await fulltext(cluster, bounded, name, `${name}w${i}`);
        assert.deepEqual(found.hits.map((hit) => hit.id), [`${name}-${i}`], `round ${round}: ${name} finds its doc`);
        const view = await getIndex(cluster, bounded, name);
        assert.equal(typeof view.memoryBytes, "number", `getIndex has a numeric memoryBytes: ${JSON.stringify(view)}`);
        const bytes = view.memoryBytes as number;
        assert.ok(bytes > 0, `just searched, ${name} is held: ${JSON.stringify(view)}`);
        alone.set(name, Math.max(alone.get(name) ?? 0, bytes));
      }
    }
    const sizes = JSON.stringify(Object.fromEntries(alone));
    for (const [name, bytes] of alone) {
      assert.ok(bytes < BUDGET_MIB * MIB, `the test needs ${name} to fit the budget alone: ${sizes}`);
    }
    assert.ok(
      [...alone.values()].reduce((sum, bytes) => sum + bytes, 0) > BUDGET_MIB * MIB,
      `the test needs the three indexes not to fit together: ${sizes}`,
    );

    let held = 0;
    for (const name of names) {
      const view = await getIndex(cluster, bounded, name);
      // memoryBytes is there while the instance holds the index, and absent once it was evicted.
      assert.ok(
        view.memoryBytes === undefined || typeof view.memoryBytes === "number",
        `getIndex has a numeric memoryBytes or none: ${JSON.stringify(view)}`,
      );
      held += (view.memoryBytes as number | undefined) ?? 0;
    }
    assert.ok(held <= BUDGET_MIB * MIB, `the instance holds ${held} bytes, at most ${BUDGET_MIB} MiB; alone: ${sizes}`);
    const evictions = sample(await metrics(bounded), "quire_search_cache_evictions_total");
    assert.ok(evictions > 0, `quire_search_cache_evictions_total is ${evictions}`);
  },
);
