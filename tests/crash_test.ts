/**
 * Crash safety: the real server process is killed with SIGKILL at random moments during a stream of writes. After
 * each restart every acknowledged write is there, the write that was in flight is wholly there or wholly absent,
 * `docCount` matches the stored documents, and search agrees with `getDocs`. `CRASH_KILLS` sets the number of kills
 * (`deno task soak` runs 50).
 */
import assert from "node:assert/strict";
import { random } from "./bench/_corpus.ts";
import { serverEnvironment, type ServerProcess, startServerProcess } from "./_server_process.ts";

const KILLS = Number(Deno.env.get("CRASH_KILLS") ?? "4");
const IDS = 40;

type Docs = Map<string, string>;

interface Write {
  action: "addDocs" | "deleteDocs";
  /** The texts this write sets, or the ids it deletes. */
  texts: Docs;
}

async function readDocs(server: ServerProcess): Promise<Docs> {
  const response = await server.call({ action: "getDocs", indexName: "crash" });
  assert.equal(response.status, 200);
  const docs: { id: string; text: string }[] = await response.json();
  return new Map(docs.map((doc) => [doc.id, doc.text]));
}

/** Whether `actual` is `before` with `write` applied wholly, or not at all. */
function wholeOrNothing(before: Docs, write: Write, actual: Docs): boolean {
  const applied = new Map(before);
  for (const [id, text] of write.texts) {
    if (write.action === "addDocs") applied.set(id, text);
    else applied.delete(id);
  }
  const same = (a: Docs, b: Docs) => a.size === b.size && [...a].every(([id, text]) => b.get(id) === text);
  return same(actual, before) || same(actual, applied);
}

Deno.test(`acknowledged writes survive ${KILLS} kill -9s, and the write in flight is whole or absent`, async () => {
  const env = await serverEnvironment();
  const next = random(KILLS);
  let server = await startServerProcess(env);
  const key = server.key;
  let expected: Docs = new Map();
  let version = 0;
  try {
    assert.equal((await server.call({ action: "createIndex", indexName: "crash", docs: [] })).status, 200);
    for (let kill = 0; kill < KILLS; kill++) {
      const killAt = performance.now() + 50 + next() * 400;
      let inFlight: Write | undefined;
      while (performance.now() < killAt) {
        const count = 1 + Math.floor(next() * 30);
        const ids = Array.from({ length: count }, () => `d${Math.floor(next() * IDS)}`);
        const unique = [...new Set(ids)];
        const write: Write = next() < 0.7
          ? { action: "addDocs", texts: new Map(unique.map((id) => [id, `doc ${id} version ${++version}`])) }
          : { action: "deleteDocs", texts: new Map(unique.map((id) => [id, ""])) };
        const body = write.action === "addDocs"
          ? { action: "addDocs", indexName: "crash", docs: [...write.texts].map(([id, text]) => ({ id, text })) }
          : { action: "deleteDocs", indexName: "crash", docIds: unique };
        inFlight = write;
        const sent = server.call(body);
        // Kill while this write is on its way, now and then.
        if (performance.now() >= killAt - 5) {
          sent.then((response) => response.body?.cancel(), () => {});
          break;
        }
        const response = await sent;
        await response.body?.cancel();
        assert.equal(response.status, 200, `${write.action} failed`);
        for (const [id, text] of write.texts) {
          if (write.action === "addDocs") expected.set(id, text);
          else expected.delete(id);
        }
        inFlight = undefined;
      }
      await server.stop("SIGKILL");
      server = await startServerProcess(env, key);
      const actual = await readDocs(server);
      if (inFlight === undefined) assert.deepEqual(actual, expected, `after kill ${kill}`);
      else assert.ok(wholeOrNothing(expected, inFlight, actual), `after kill ${kill}, the write in flight is partial`);
      expected = actual;
      const index = await (await server.call({ action: "getIndex", indexName: "crash" })).json();
      assert.equal(index.docCount, actual.size, "docCount matches the stored documents");
      const search = await (await server.call({
        action: "search",
        indexName: "crash",
        query: "doc",
        mode: "fulltext",
        limit: 1,
      })).json();
      assert.equal(search.total, actual.size, "search agrees with getDocs");
    }
    console.log(`crash safety: ${KILLS} kill -9s, ${version} writes tried, 0 violations`);
  } finally {
    await server.stop().catch(() => 0);
  }
});
