/**
 * Re-embedding without downtime: while `reembedIndex` moves a 20,000-document index to another model, four clients
 * search it in every mode and all get 200; each answer comes wholly from the old vectors or wholly from the new ones;
 * writes made during the rebuild are in the result, embedded with the new model.
 */
import assert from "node:assert/strict";
import { ok, serverEnvironment, type ServerProcess, startServerProcess } from "../_server_process.ts";

const DOCS = 20_000;
const WORDS = ["river", "lantern", "forest", "harbor", "meadow", "canyon", "glacier", "orchard", "valley", "summit"];

function textOf(i: number): string {
  return Array.from({ length: 8 }, (_, k) => WORDS[(i * 7 + k * 3 + (i >> k)) % WORDS.length]).join(" ") + ` n${i}`;
}

interface Hits {
  hits: { id: string; score: number }[];
}

/** The fixed probe: a vector search over the documents that no write touches. */
const PROBE = {
  action: "search",
  indexName: "big",
  query: "lantern by the glacier",
  mode: "vector",
  filter: { group: "base" },
};

const signature = (result: Hits) => result.hits.map((hit) => `${hit.id}:${hit.score.toFixed(5)}`).join(",");

async function waitReady(server: ServerProcess): Promise<{ model: { id: string }; docCount: number }> {
  for (;;) {
    const index = await ok<{ status: string; model: { id: string }; docCount: number }>(server, {
      action: "getIndex",
      indexName: "big",
    });
    if (index.status === "Ready") return index;
    if (index.status === "Failed") throw new Error(`re-embedding failed: ${JSON.stringify(index)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Writes during the rebuild (new documents in, some of them out again), then waits for the index to be Ready. */
async function writeDuringRebuild(server: ServerProcess): Promise<{ model: { id: string }; docCount: number }> {
  for (let batch = 0; batch < 5; batch++) {
    const docs = Array.from({ length: 20 }, (_, i) => ({
      id: `w${batch}-${i}`,
      text: `written during the rebuild ${batch} ${i}`,
      metadata: { group: "written" },
    }));
    await ok(server, { action: "addDocs", indexName: "big", docs });
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await ok(server, { action: "deleteDocs", indexName: "big", docIds: ["w0-0", "w0-1"] });
  return await waitReady(server);
}

Deno.test("searches answer 200 from one set of vectors while reembedIndex runs, and its writes are kept", async () => {
  await using server = await startServerProcess({ ...await serverEnvironment(), LOG_REQUESTS: "false" });
  await ok(server, { action: "createIndex", indexName: "big", docs: [] });
  for (let from = 0; from < DOCS; from += 1_000) {
    const docs = Array.from({ length: 1_000 }, (_, i) => ({
      id: `d${from + i}`,
      text: textOf(from + i),
      metadata: { group: "base" },
    }));
    await ok(server, { action: "addDocs", indexName: "big", docs });
  }
  const before = signature(await ok<Hits>(server, PROBE));

  const queued = await server.call({ action: "reembedIndex", indexName: "big", modelId: "svc-mediumlm" });
  assert.equal(queued.status, 202, await queued.text());
  const statuses = new Map<number, number>();
  const probes: string[] = [];
  let running = true;
  const modes = ["fulltext", "vector", "hybrid"];
  const clients = Array.from({ length: 4 }, async (_, client) => {
    for (let i = 0; running; i++) {
      const body = i % 2 === 0
        ? PROBE
        : { action: "search", indexName: "big", query: WORDS[(client + i) % 10], mode: modes[i % 3] };
      const response = await server.call(body);
      const text = await response.text();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      if (response.status === 200 && body === PROBE) probes.push(signature(JSON.parse(text)));
    }
  });
  let ready: { model: { id: string }; docCount: number };
  try {
    ready = await writeDuringRebuild(server);
  } finally {
    running = false;
    await Promise.all(clients);
  }

  assert.equal(ready.model.id, "svc-mediumlm");
  assert.equal(ready.docCount, DOCS + 98, "every write made during the rebuild is in the result");
  const after = signature(await ok<Hits>(server, PROBE));
  assert.notEqual(after, before, "the new model ranks differently");
  const mixed = probes.filter((probe) => probe !== before && probe !== after);
  assert.deepEqual(mixed, [], "each answer came from the old vectors or the new ones, never a mix");
  assert.deepEqual([...statuses.keys()], [200], `every search answered 200: ${JSON.stringify([...statuses])}`);
  const written = await ok<Hits>(server, {
    action: "search",
    indexName: "big",
    query: "written during the rebuild 3 7",
    mode: "vector",
    filter: { group: "written" },
  });
  assert.equal(written.hits[0]!.id, "w3-7", "a document written during the rebuild has the new model's vector");
  const gone = await ok<unknown[]>(server, { action: "getDocs", indexName: "big", options: { docIds: ["w0-0"] } });
  assert.deepEqual(gone, []);
  const total = [...statuses.values()].reduce((sum, count) => sum + count, 0);
  console.log(`online re-embedding: ${DOCS} docs, ${total} searches by 4 clients, all 200; 100 written, 2 deleted`);
});
