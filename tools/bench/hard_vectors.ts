/**
 * `deno task bench:vectors`: vector search on client vectors that are close to random (uniform on the 384-d sphere),
 * and on a clustered corpus, over HTTP with 8 clients: p50, p99 and recall@10 against an exact scan, and the p50 right
 * after the bulk load against the p50 once the server has settled. With
 * `--before <dir>` it runs the same on a server started from another checkout (e.g. a git worktree of an earlier
 * commit) in the same run, and prints the ratios.
 */
import { parseArgs } from "node:util";
import type { ServerProcess } from "../../tests/_server_process.ts";
import { line, ok, timed } from "./_bench_helpers.ts";
import { ms, quantile } from "./_corpus.ts";
import {
  type Corpus,
  DIMS,
  loadClientVectors,
  recallAgainstExhaustive,
  settle,
  startClientVectorServer,
  vectorOf,
} from "./_client_vectors.ts";

const args = parseArgs({ args: Deno.args, options: { before: { type: "string" }, docs: { type: "string" } } });
const DOCS = Number(args.values.docs ?? 100_000);
const CLIENTS = 8;
const QUERIES = 800;
const RECALL_QUERIES = 100;

async function latencies(server: ServerProcess, corpus: Corpus): Promise<number[]> {
  const found: number[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (next < QUERIES) {
      const vector = vectorOf(corpus, 10_000_000 + next++);
      found.push(await timed(() => ok(server, { action: "search", indexName: corpus, mode: "vector", vector })));
    }
  }));
  return found;
}

/** At one client: the server's own time (its `Server-Timing`) and the wall time of each search, summed; or null. */
async function serverShare(server: ServerProcess, corpus: Corpus): Promise<{ server: number; wall: number } | null> {
  let serverMs = 0;
  let wallMs = 0;
  for (let i = 0; i < QUERIES / 4; i++) {
    const body = { action: "search", indexName: corpus, mode: "vector" };
    const vector = vectorOf(corpus, 30_000_000 + i);
    const started = performance.now();
    const response = await server.call({ ...body, vector });
    await response.arrayBuffer();
    wallMs += performance.now() - started;
    const timing = response.headers.get("server-timing")?.match(/dur=([\d.]+)/)?.[1];
    if (timing === undefined) return null;
    serverMs += Number(timing);
  }
  return { server: serverMs, wall: wallMs };
}

const roots: [string, string][] = [["after", new URL("../..", import.meta.url).pathname]];
if (args.values.before !== undefined) roots.unshift(["before", args.values.before]);
const results = new Map<string, { p50: number; p99: number; recall: number }>();
for (const corpus of ["near-random", "clustered"] as const) {
  for (const [name, root] of roots) {
    await using server = await startClientVectorServer(root);
    const took = await loadClientVectors(server, corpus, DOCS);
    line(`${name} ${corpus}`, `${DOCS} docs × ${DIMS}-d client vectors loaded in ${(took / 1000).toFixed(1)} s`);
    // Fresh: at once, while the work a bulk load leaves behind (graph inserts, snapshots, tuning) still runs.
    const fresh = quantile(await latencies(server, corpus), 0.5);
    const waited = await settle(server);
    await latencies(server, corpus);
    const samples = await latencies(server, corpus);
    const result = {
      p50: quantile(samples, 0.5),
      p99: quantile(samples, 0.99),
      recall: await recallAgainstExhaustive(server, corpus, "vector", RECALL_QUERIES),
    };
    results.set(`${name} ${corpus}`, result);
    line(
      `${name} ${corpus}`,
      `vector, ${CLIENTS} clients, ${QUERIES} queries: p50 ${ms(result.p50)}, p99 ${ms(result.p99)}; ` +
        `recall@10 ${result.recall.toFixed(3)} against exact`,
    );
    line(
      `${name} ${corpus}`,
      `fresh p50 ${ms(fresh)} right after the load, ${(fresh / result.p50).toFixed(2)}× the p50 once settled ` +
        `(${waited.toFixed(0)} s later)`,
    );
    const share = await serverShare(server, corpus);
    if (share !== null) {
      line(
        `${name} ${corpus}`,
        `1 client: the server's own time is ${(share.server / share.wall * 100).toFixed(1)}% of wall time ` +
          `(${ms(share.server / (QUERIES / 4))} of ${ms(share.wall / (QUERIES / 4))} a search)`,
      );
    }
  }
  const before = results.get(`before ${corpus}`);
  const after = results.get(`after ${corpus}`)!;
  if (before !== undefined) {
    line(
      corpus,
      `p50 ${(before.p50 / after.p50).toFixed(2)}× faster, recall ${before.recall.toFixed(3)} → ${
        after.recall.toFixed(3)
      }`,
    );
  }
}
