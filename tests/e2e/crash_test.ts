/**
 * Crash safety: the real server process is killed with SIGKILL at random moments during a stream of `createIndex`,
 * `addDocs` (small, and large enough to be staged), `deleteDocs` and `deleteIndex` calls. After each restart every
 * acknowledged write is there, the write that was in flight is wholly there or wholly absent, `docCount` matches the
 * stored documents, and search agrees with `getDocs`. At the end, garbage collection leaves no orphaned key behind.
 * `CRASH_KILLS` sets the number of kills (`deno task soak` runs 50).
 */
import assert from "node:assert/strict";
import { random } from "../../tools/bench/_corpus.ts";
import { serverEnvironment, type ServerProcess, startServerProcess } from "../_server_process.ts";
import { findOrphans } from "../_kv_audit.ts";
import { openKvStore } from "../../src/storage/kv_store.ts";
import { collectGarbage } from "../../src/storage/garbage_collector.ts";
import { ABANDONED_AFTER_MS } from "../../src/storage/timed_id.ts";

const KILLS = Number(Deno.env.get("CRASH_KILLS") ?? "4");
const IDS = 40;
/** Documents of each `createIndex` of the churned index: more than one commit holds, so the build is staged. */
const CHURN_DOCS = 600;
/** Text of a large write's documents: twenty of them outgrow one commit, so the write is staged. */
const LARGE_TEXT = "large ".repeat(700);

type Docs = Map<string, string>;

/** One write: to the main index (its texts, or the ids it deletes), or creating or deleting the churned index. */
type Write =
  | { action: "addDocs" | "deleteDocs"; texts: Docs }
  | { action: "createIndex"; texts: Docs }
  | { action: "deleteIndex" };

/** What the store should hold: the main index's documents, and the churned index's, or null when it is absent. */
interface Expected {
  main: Docs;
  churn: Docs | null;
}

async function readDocs(server: ServerProcess, indexName: string): Promise<Docs | null> {
  const response = await server.call({ action: "getDocs", indexName });
  if (response.status === 404) {
    await response.body?.cancel();
    return null;
  }
  assert.equal(response.status, 200);
  const docs: { id: string; text: string }[] = await response.json();
  return new Map(docs.map((doc) => [doc.id, doc.text]));
}

function sameDocs(a: Docs | null, b: Docs | null): boolean {
  if (a === null || b === null) return a === b;
  return a.size === b.size && [...a].every(([id, text]) => b.get(id) === text);
}

/** The expected state with `write` applied. */
function applied(expected: Expected, write: Write): Expected {
  if (write.action === "createIndex") return { ...expected, churn: write.texts };
  if (write.action === "deleteIndex") return { ...expected, churn: null };
  const main = new Map(expected.main);
  for (const [id, text] of write.texts) {
    if (write.action === "addDocs") main.set(id, text);
    else main.delete(id);
  }
  return { ...expected, main };
}

function requestOf(write: Write): Record<string, unknown> {
  switch (write.action) {
    case "createIndex":
      return { action: "createIndex", indexName: "churn", docs: [...write.texts].map(([id, text]) => ({ id, text })) };
    case "deleteIndex":
      return { action: "deleteIndex", indexName: "churn" };
    case "addDocs":
      return { action: "addDocs", indexName: "crash", docs: [...write.texts].map(([id, text]) => ({ id, text })) };
    case "deleteDocs":
      return { action: "deleteDocs", indexName: "crash", docIds: [...write.texts.keys()] };
  }
}

/** The next write of the stream, drawn from `next`. */
function nextWrite(next: () => number, expected: Expected, version: number): Write {
  const draw = next();
  if (draw < 0.1) {
    if (expected.churn !== null) return { action: "deleteIndex" };
    const texts: Docs = new Map(
      Array.from({ length: CHURN_DOCS }, (_, i) => [`c${i}`, `churn ${i} version ${version}`]),
    );
    return { action: "createIndex", texts };
  }
  if (draw < 0.2) {
    const texts: Docs = new Map(Array.from({ length: 20 }, (_, i) => [`d${i * 2}`, `${LARGE_TEXT}version ${version}`]));
    return { action: "addDocs", texts };
  }
  const count = 1 + Math.floor(next() * 30);
  const ids = [...new Set(Array.from({ length: count }, () => `d${Math.floor(next() * IDS)}`))];
  return draw < 0.7
    ? { action: "addDocs", texts: new Map(ids.map((id) => [id, `doc ${id} version ${version}`])) }
    : { action: "deleteDocs", texts: new Map(ids.map((id) => [id, ""])) };
}

/** Checks an index after a restart: `docCount` matches the stored documents, and search agrees with them. */
async function checkIndex(server: ServerProcess, indexName: string, docs: Docs): Promise<void> {
  const index = await (await server.call({ action: "getIndex", indexName })).json();
  assert.equal(index.docCount, docs.size, `docCount of "${indexName}" matches the stored documents`);
  const search = await (await server.call({ action: "search", indexName, query: "version", mode: "fulltext" }))
    .json();
  assert.equal(search.total, docs.size, `search of "${indexName}" agrees with getDocs`);
}

Deno.test(`acknowledged writes survive ${KILLS} kill -9s, the write in flight is whole or absent`, async () => {
  const env = await serverEnvironment();
  const next = random(KILLS);
  let server = await startServerProcess(env);
  const key = server.key;
  let expected: Expected = { main: new Map(), churn: null };
  let writes = 0;
  try {
    assert.equal((await server.call({ action: "createIndex", indexName: "crash", docs: [] })).status, 200);
    for (let kill = 0; kill < KILLS; kill++) {
      const killAt = performance.now() + 50 + next() * 400;
      let inFlight: Write | undefined;
      while (performance.now() < killAt) {
        const write = nextWrite(next, expected, ++writes);
        inFlight = write;
        const sent = server.call(requestOf(write));
        // Kill while this write is on its way, now and then.
        if (performance.now() >= killAt - 5) {
          sent.then((response) => response.body?.cancel(), () => {});
          break;
        }
        const response = await sent;
        await response.body?.cancel();
        assert.equal(response.status, 200, `${write.action} failed`);
        expected = applied(expected, write);
        inFlight = undefined;
      }
      await server.stop("SIGKILL");
      server = await startServerProcess(env, key);
      const actual: Expected = { main: (await readDocs(server, "crash"))!, churn: await readDocs(server, "churn") };
      const whole = (state: Expected) => sameDocs(actual.main, state.main) && sameDocs(actual.churn, state.churn);
      if (inFlight === undefined) assert.ok(whole(expected), `after kill ${kill}, acknowledged writes are there`);
      else assert.ok(whole(expected) || whole(applied(expected, inFlight)), `after kill ${kill}, a write is partial`);
      expected = actual;
      await checkIndex(server, "crash", actual.main);
      if (actual.churn !== null) await checkIndex(server, "churn", actual.churn);
    }
    await server.stop("SIGKILL");
    {
      using kv = await openKvStore(env.DENO_KV_PATH!);
      // As if long after the last write: whatever a killed writer left is abandoned by then.
      await collectGarbage(kv, Date.now() + 2 * ABANDONED_AFTER_MS);
      assert.deepEqual(await findOrphans(kv), [], "no orphaned keys after garbage collection");
    }
    console.log(`crash safety: ${KILLS} kill -9s, ${writes} writes tried, 0 violations, 0 orphans after collection`);
  } finally {
    await server.stop().catch(() => 0);
  }
});
