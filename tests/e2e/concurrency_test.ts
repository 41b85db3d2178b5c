/** End-to-end: many clients writing one index at once lose nothing, and racing lifecycle calls end whole. */
import assert from "node:assert/strict";
import { startTestServer } from "../_helpers.ts";
import { serverEnvironment, startServerProcess } from "../_server_process.ts";

const CLIENTS = 50;

Deno.test("50 clients upserting and deleting overlapping ids lose no update, and the counts add up", async () => {
  await using server = await startTestServer({ env: { PROJECT_MAX_CONCURRENCY: "200" } });
  await server.ok({ action: "createIndex", indexName: "busy", docs: [] });
  let added = 0;
  let deleted = 0;
  const lastText = new Map<string, string>();
  await Promise.all(Array.from({ length: CLIENTS }, async (_, client) => {
    for (let round = 0; round < 4; round++) {
      // Half of the ids are this client's own, half are shared with every other client.
      const ids = [`own-${client}-${round}`, `shared-${(client + round) % 10}`];
      const docs = ids.map((id) => ({ id, text: `client ${client} round ${round} writes ${id}` }));
      const result = await server.ok<{ added: number; updated: number }>({
        action: "addDocs",
        indexName: "busy",
        docs,
      });
      assert.equal(result.added + result.updated, 2);
      added += result.added;
      if (round % 2 === 1) {
        const gone = await server.ok<{ deleted: number }>({
          action: "deleteDocs",
          indexName: "busy",
          docIds: [ids[1]!],
        });
        deleted += gone.deleted;
      } else lastText.set(ids[0]!, docs[0]!.text);
    }
  }));
  const docs = await server.ok<{ id: string; text: string }[]>({ action: "getDocs", indexName: "busy" });
  const index = await server.ok<{ docCount: number; version: string }>({ action: "getIndex", indexName: "busy" });
  assert.equal(index.docCount, docs.length, "docCount is exact");
  assert.equal(added - deleted, docs.length, "every add and delete is accounted for");
  for (const [id, text] of lastText) {
    assert.equal(docs.find((doc) => doc.id === id)?.text, text, `the write to ${id} survived`);
  }
  const writes = CLIENTS * 4 + CLIENTS * 2;
  assert.equal(Number(index.version), 1 + writes, "every write made exactly one revision");
  const search = await server.ok<{ total: number }>({
    action: "search",
    indexName: "busy",
    query: "writes",
    mode: "fulltext",
    limit: 1,
  });
  assert.equal(search.total, docs.length, "search agrees with getDocs");
  console.log(`concurrency: ${CLIENTS} clients, ${writes} writes, 0 lost updates, counts exact`);
});

Deno.test("concurrent createIndex of one name: exactly one succeeds, the others get 409", async () => {
  await using server = await startTestServer({ env: { PROJECT_MAX_CONCURRENCY: "200" } });
  const responses = await Promise.all(Array.from({ length: 20 }, (_, i) =>
    server.call({
      action: "createIndex",
      indexName: "contested",
      docs: [{ id: `d${i}`, text: `attempt ${i}` }],
    })));
  const statuses = await Promise.all(responses.map(async (response) => {
    await response.body?.cancel();
    return response.status;
  }));
  assert.equal(statuses.filter((status) => status === 200).length, 1);
  assert.equal(statuses.filter((status) => status === 409).length, 19);
  const docs = await server.ok<unknown[]>({ action: "getDocs", indexName: "contested" });
  assert.equal(docs.length, 1, "only the winner's documents exist");
});

Deno.test("deleteIndex racing addDocs leaves the index wholly gone or wholly present", async () => {
  await using server = await startTestServer({ env: { PROJECT_MAX_CONCURRENCY: "200" } });
  for (let attempt = 0; attempt < 10; attempt++) {
    const name = `race-${attempt}`;
    await server.ok({ action: "createIndex", indexName: name, docs: [{ id: "seed", text: "seed" }] });
    const docs = Array.from({ length: 20 }, (_, i) => ({ id: `d${i}`, text: `doc ${i}` }));
    const [add, remove] = await Promise.all([
      server.call({ action: "addDocs", indexName: name, docs }),
      server.call({ action: "deleteIndex", indexName: name }),
    ]);
    await add.body?.cancel();
    await remove.body?.cancel();
    assert.equal(remove.status, 200);
    const after = await server.call({ action: "getIndex", indexName: name });
    await after.body?.cancel();
    assert.equal(after.status, 404, "the delete wins in the end, whatever the order");
    // Recreating the name starts empty: nothing of the racing write leaks into the new index.
    await server.ok({ action: "createIndex", indexName: name, docs: [] });
    assert.deepEqual(await server.ok({ action: "getDocs", indexName: name }), []);
  }
});

Deno.test("two server processes on one KV file: every write lands or is refused with 409 or 503, never a 500", async () => {
  const env = { ...(await serverEnvironment()), LOG_REQUESTS: "false", PROJECT_MAX_CONCURRENCY: "1000" };
  await using first = await startServerProcess(env);
  await using second = await startServerProcess(env, first.key);
  assert.equal((await first.call({ action: "createIndex", indexName: "shared", docs: [] })).status, 200);
  const writes = Array.from({ length: 200 }, (_, i) => {
    const server = i % 2 === 0 ? first : second;
    return server.call({ action: "addDocs", indexName: "shared", docs: [{ id: `d${i}`, text: `text ${i}` }] })
      .then(async (response) => {
        await response.body?.cancel();
        return [i, response.status] as const;
      });
  });
  const statuses = await Promise.all(writes);
  const landed = statuses.filter(([, status]) => status === 200).map(([i]) => `d${i}`);
  assert.deepEqual(statuses.filter(([, status]) => ![200, 409, 503].includes(status)), [], "no other status");
  const stored = await (await first.call({ action: "getDocs", indexName: "shared" })).json();
  assert.deepEqual(
    stored.map((doc: { id: string }) => doc.id).sort(),
    landed.sort(),
    "exactly the acknowledged ones",
  );
});
