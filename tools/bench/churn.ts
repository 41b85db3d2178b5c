/**
 * `deno task bench:churn`: whether memory, latency and the store follow the live data or its history (issue 41's
 * target 4). An index is kept at 20,000 live documents (64-d client vectors; 12 words of Debian's `wamerican` list and
 * two words of its own a text) while documents pass through it in rounds of 1,000 added and the 1,000 oldest deleted,
 * each a sequential `addDocs` and `deleteDocs` as a user's loader would send them. Before the churn, at every tenth of it
 * and after it: the server's RSS, the p50 of fulltext and vector searches at one client, and the store's size and live
 * pages (SQLite's pages less its free list). Last, a fresh store loaded with the same live documents, for the pages a
 * store of that data needs.
 *
 *   deno task bench:churn                      # 500,000 documents pass through
 *   deno task bench:churn --through 100000
 */
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import type { ServerProcess } from "../../tests/_server_process.ts";
import { unitVector } from "../../tests/_vectors.ts";
import { line, ok, rssMiB, timed } from "./_bench_helpers.ts";
import { dictionaryWords, quantile } from "./_corpus.ts";
import { clientVectorEnvironment, dictionaryText, settle, startClientVectorServer } from "./_client_vectors.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { through: { type: "string", default: "500000" }, live: { type: "string", default: "20000" } },
});
const THROUGH = Number(values.through);
const LIVE = Number(values.live);
const ROUND = 1_000;
const DIMS = 64;
const SEARCHES = 200;
const INDEX = "churn";

const words = await dictionaryWords();
const root = new URL("../..", import.meta.url).pathname;

/** A server over a fresh store whose model `client-64` takes 64-d client vectors. */
async function freshServer(): Promise<{ server: ServerProcess; kvPath: string }> {
  const env = await clientVectorEnvironment({}, DIMS);
  return { server: await startClientVectorServer(root, env), kvPath: env.DENO_KV_PATH! };
}

/** Two words of document `n`'s own: letters only, so that they are words to the analyzer. */
function ownWords(n: number): string {
  const letters = (value: number) => value.toString(26).replace(/./g, (c) => String.fromCharCode(97 + parseInt(c, 26)));
  return `zq${letters(n)} xw${letters(n * 7 + 3)}`;
}

function doc(n: number) {
  const vector = unitVector(n, DIMS, false).map((x) => Math.round(x * 1e6) / 1e6);
  return { id: `d${n}`, text: `${dictionaryText(words, 41, n)} ${ownWords(n)}`, vector };
}

async function addDocs(server: ServerProcess, from: number, count: number): Promise<void> {
  const docs = Array.from({ length: count }, (_, i) => doc(from + i));
  await ok(server, { action: "addDocs", indexName: INDEX, docs });
}

/** The p50 of fulltext (two words of a live document's text) and vector searches at one client. */
async function p50s(server: ServerProcess, liveFrom: number): Promise<{ fulltext: number; vector: number }> {
  const fulltext: number[] = [];
  const vector: number[] = [];
  for (let i = 0; i < SEARCHES; i++) {
    const text = doc(liveFrom + ((i * 7_919) % LIVE)).text.split(" ");
    const query = `${text[i % 10]} ${text[(i % 10) + 1]}`;
    fulltext.push(await timed(() => ok(server, { action: "search", indexName: INDEX, mode: "fulltext", query })));
    const probe = unitVector(90_000_000 + i, DIMS, false);
    vector.push(await timed(() => ok(server, { action: "search", indexName: INDEX, mode: "vector", vector: probe })));
  }
  return { fulltext: quantile(fulltext, 0.5), vector: quantile(vector, 0.5) };
}

/** The store's file size (with its write-ahead log), its live pages in MiB, and its rows by their key's first part. */
function storeMiB(kvPath: string): { file: number; live: number; parts: string } {
  const size = (path: string) => {
    try {
      return Deno.statSync(path).size;
    } catch {
      return 0;
    }
  };
  const db = new DatabaseSync(kvPath, { readOnly: true });
  try {
    const pragma = (name: string) => Number(Object.values(db.prepare(`PRAGMA ${name}`).get()!)[0]);
    const live = (pragma("page_count") - pragma("freelist_count")) * pragma("page_size");
    // A key's first part is a string: its tag byte 2, its bytes, then 0.
    const rows = db.prepare(
      "SELECT substr(k, 2, instr(k, x'00') - 2) AS part, count(*) AS n, sum(length(v)) AS bytes FROM kv GROUP BY part",
    ).all() as { part: Uint8Array; n: number; bytes: number }[];
    const parts = rows.map((row) =>
      `${new TextDecoder().decode(row.part)} ${row.n} (${(row.bytes / 2 ** 20).toFixed(1)} MiB)`
    ).join(", ");
    return { file: (size(kvPath) + size(`${kvPath}-wal`)) / 2 ** 20, live: live / 2 ** 20, parts };
  } finally {
    db.close();
  }
}

interface Reading {
  rss: number;
  fulltext: number;
  vector: number;
  file: number;
  live: number;
  parts: string;
}

async function reading(server: ServerProcess, kvPath: string, liveFrom: number): Promise<Reading> {
  const searched = await p50s(server, liveFrom);
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  return { rss: await rssMiB(server.pid), ...searched, ...storeMiB(kvPath) };
}

function show(label: string, now: Reading, start: Reading): void {
  line(
    label,
    `RSS ${now.rss.toFixed(0)} MiB (${(now.rss / start.rss).toFixed(2)}×), fulltext p50 ${
      now.fulltext.toFixed(2)
    } ms ` +
      `(${(now.fulltext / start.fulltext).toFixed(2)}×), vector p50 ${now.vector.toFixed(2)} ms ` +
      `(${(now.vector / start.vector).toFixed(2)}×), store ${now.file.toFixed(0)} MiB, live pages ` +
      `${now.live.toFixed(0)} MiB`,
  );
  line("", `store rows: ${now.parts}`);
}

const { server, kvPath } = await freshServer();
await using _server = server;
await ok(server, { action: "createIndex", indexName: INDEX, modelId: "client-64", docs: [] });
for (let from = 0; from < LIVE; from += ROUND) await addDocs(server, from, Math.min(ROUND, LIVE - from));
await settle(server);
const start = await reading(server, kvPath, 0);
show("churn before", start, start);
const started = performance.now();
let next = LIVE;
for (let passed = 0; passed < THROUGH; passed += ROUND) {
  await addDocs(server, next, ROUND);
  const ids = Array.from({ length: ROUND }, (_, i) => `d${next - LIVE + i}`);
  await ok(server, { action: "deleteDocs", indexName: INDEX, docIds: ids });
  next += ROUND;
  if ((passed + ROUND) % (THROUGH / 10) === 0) {
    show(`churn ${(passed + ROUND) / 1000}k`, await reading(server, kvPath, next - LIVE), start);
  }
}
const churnSeconds = (performance.now() - started) / 1000;
line("churn rate", `${(2 * THROUGH / churnSeconds).toFixed(0)} documents added or deleted a second`);
await settle(server);
const end = await reading(server, kvPath, next - LIVE);
show("churn settled", end, start);

const fresh = await freshServer();
await using _fresh = fresh.server;
await ok(fresh.server, { action: "createIndex", indexName: INDEX, modelId: "client-64", docs: [] });
for (let from = next - LIVE; from < next; from += ROUND) await addDocs(fresh.server, from, ROUND);
await settle(fresh.server);
const fresher = await reading(fresh.server, fresh.kvPath, next - LIVE);
show("fresh store", fresher, start);
line("store after churn", `live pages ${(end.live / fresher.live).toFixed(2)}× a fresh store's (target ≤ 2×)`);
