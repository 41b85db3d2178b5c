/**
 * `deno task bench:instances`: several server processes over one KV file, as issue "Many instances" measures them.
 *
 * - contention: 3 instances × 8 concurrent writers for 60 s, one instance killed with SIGKILL halfway; every status
 *   must be 200, 409 or 503 (with Retry-After), and every acknowledged write must be stored.
 * - memory budget: `SEARCH_CACHE_MB=200`, three 20,000-document indexes searched round-robin; every search must answer
 *   as an instance with room for all three does; RSS against the budget plus the process's baseline.
 *
 * `--quick`: 10 s of writers and three 5,000-document indexes.
 */
import { parseArgs } from "node:util";
import { metricIn, metricsText, type ServerProcess, startServerProcess } from "../../tests/_server_process.ts";
import { benchDocs, benchQueries, ms, quantile } from "./_corpus.ts";
import { line, ok, rssMiB, writeFastModelRegistry } from "./_bench_helpers.ts";

const { values } = parseArgs({ args: Deno.args, options: { quick: { type: "boolean", default: false } } });
const WRITE_SECONDS = values.quick ? 10 : 60;
const WRITERS = 8;
const INSTANCES = 3;
/**
 * Documents per index: about 100 MB of search state each at 20,000 (float32 vectors 30 MB with growth room 50, an int8
 * graph 14, texts and postings the rest), so that two of the three fit the budget and the third evicts one. The issue's
 * 50,000-document indexes need about 250 MB each, more than the 200 MB budget alone: they answer 507.
 */
const INDEX_DOCS = values.quick ? 5_000 : 20_000;
const BUDGET_MB = 200;

const dir = await Deno.makeTempDir({ prefix: "quire-instances-" });
await writeFastModelRegistry(dir);

function environment(name: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    HOSTNAME: "127.0.0.1",
    PORT: "0",
    DENO_KV_PATH: `${dir}/${name}/quire.kv`,
    MODELS_FILE: `${dir}/models.json`,
    ALLOW_REMOTE_MODELS: "false",
    LOG_REQUESTS: "false",
    ...extra,
  };
}

console.log(`quire many-instances benchmark: ${Deno.build.target}, ${navigator.hardwareConcurrency} cores`);

// 5. Contention.
{
  const env = environment("contention");
  const first = await startServerProcess(env);
  const servers = [first];
  for (let i = 1; i < INSTANCES; i++) servers.push(await startServerProcess(env, first.key));
  const alive = new Set(servers);
  try {
    await ok(first, { action: "createIndex", indexName: "shared", docs: [] });
    const statuses = new Map<string, number>();
    const acknowledged = new Set<string>();
    let connectionErrors = 0;
    let bad = 0;
    const deadline = Date.now() + WRITE_SECONDS * 1000;
    let counter = 0;
    const writer = async (server: ServerProcess, writerId: string) => {
      while (Date.now() < deadline) {
        const deleting = counter % 5 === 4;
        const ids = Array.from({ length: 1 + (counter % 5) }, (_, i) => `${writerId}-${counter}-${i}`);
        counter++;
        const body = deleting
          ? { action: "deleteDocs", indexName: "shared", docIds: ids.map((id) => `ghost-${id}`) }
          : { action: "addDocs", indexName: "shared", docs: ids.map((id) => ({ id, text: `contention ${id}` })) };
        let response: Response;
        try {
          response = await server.call(body);
          await response.body?.cancel();
        } catch {
          connectionErrors++;
          if (!alive.has(server)) await new Promise((resolve) => setTimeout(resolve, 50));
          continue;
        }
        const label = `${response.status}${response.status === 503 && !response.headers.has("retry-after") ? "!" : ""}`;
        statuses.set(label, (statuses.get(label) ?? 0) + 1);
        if (![200, 409, 503].includes(response.status) || label.endsWith("!")) bad++;
        if (response.status === 200 && !deleting) ids.forEach((id) => acknowledged.add(id));
      }
    };
    const killer = (async () => {
      await new Promise((resolve) => setTimeout(resolve, WRITE_SECONDS * 500));
      alive.delete(servers[2]!);
      await servers[2]!.stop("SIGKILL");
    })();
    await Promise.all([
      killer,
      ...servers.flatMap((server, i) => Array.from({ length: WRITERS }, (_, w) => writer(server, `i${i}w${w}`))),
    ]);
    const stored = new Set<string>();
    const response = await first.call({ action: "getDocs", indexName: "shared" });
    for (const doc of await response.json() as { id: string }[]) stored.add(doc.id);
    const lost = [...acknowledged].filter((id) => !stored.has(id)).length;
    const view = await ok<{ docCount: number }>(first, { action: "getIndex", indexName: "shared" });
    const requests = [...statuses.values()].reduce((sum, n) => sum + n, 0);
    line(
      "5. contention",
      `${INSTANCES} instances × ${WRITERS} writers for ${WRITE_SECONDS} s, one killed with SIGKILL halfway: ` +
        `${requests} answers ${JSON.stringify(Object.fromEntries(statuses))}, ${connectionErrors} connection ` +
        `errors; ${bad} answers outside 200/409/503+Retry-After; ${acknowledged.size} acknowledged ids, ${lost} lost; ` +
        `docCount ${view.docCount} of ${stored.size} stored`,
    );
  } finally {
    for (const server of alive) await server.stop();
  }
}

// 6. Memory budget.
{
  const env = environment("budget", { SEARCH_CACHE_MB: String(BUDGET_MB) });
  let server = await startServerProcess(env);
  const key = server.key;
  const names = ["one", "two", "three"];
  try {
    for (const name of names) {
      await ok(server, { action: "createIndex", indexName: name, docs: [] });
      for (let start = 0; start < INDEX_DOCS; start += 1_000) {
        await ok(server, { action: "addDocs", indexName: name, docs: benchDocs(`${name}-`, start, 1_000) });
      }
    }
    await server.stop();
    // The reference: an instance over the same store with room for everything, whose answers must be matched.
    const reference = await startServerProcess({ ...env, SEARCH_CACHE_MB: "4096" }, key);
    server = await startServerProcess(env, key);
    // The baseline: the process with its model loaded (readiness waits for it) and no search state.
    await fetch(server.url.replace("/manage", "/readyz")).then((response) => response.body?.cancel());
    const baseline = await rssMiB(server.pid);
    let peak = baseline;
    const sampler = setInterval(async () => peak = Math.max(peak, await rssMiB(server.pid).catch(() => 0)), 25);
    const latencies: number[] = [];
    const queries = benchQueries(3, 5);
    let matching = 0;
    let searches = 0;
    for (const query of queries) {
      for (const name of names) {
        const body = { action: "search", indexName: name, query, mode: "hybrid", include: [] };
        const started = performance.now();
        const found = await ok<{ hits: unknown[] }>(server, body);
        latencies.push(performance.now() - started);
        searches++;
        const expected = await ok<{ hits: unknown[] }>(reference, body);
        if (JSON.stringify(found.hits) === JSON.stringify(expected.hits)) matching++;
      }
    }
    await reference.stop();
    clearInterval(sampler);
    const evictions = metricIn(await metricsText(server), "quire_search_cache_evictions_total");
    const sizes = await Promise.all(
      names.map((name) => ok<{ memoryBytes?: number }>(server, { action: "getIndex", indexName: name })),
    );
    const held = sizes.map((view) => ((view.memoryBytes ?? 0) / 2 ** 20).toFixed(0)).join(" + ");
    line(
      "6. memory budget",
      `SEARCH_CACHE_MB=${BUDGET_MB}, three ${INDEX_DOCS}-doc indexes round-robin: ${matching}/${searches} searches ` +
        `answered as by an instance with room for all, median ${
          ms(quantile(latencies, 0.5))
        }; ${evictions} evictions; held now ${held} MiB; RSS baseline ` +
        `${baseline.toFixed(0)} MiB, peak ${peak.toFixed(0)} MiB (budget + baseline: ${
          (BUDGET_MB + baseline).toFixed(0)
        } MiB)`,
    );
  } finally {
    await server.stop();
  }
}
await Deno.remove(dir, { recursive: true });
