/**
 * End-to-end: this host's copies of snapshots (`SEGMENT_DIR`). A restart loads from the copy and answers as the store's
 * snapshot does; a copy that is damaged, cut short or of another version is read from the store instead and replaced;
 * with `SEGMENT_DIR=off` there are none.
 */
import assert from "node:assert/strict";
import { dirname } from "node:path";
import { indexKey, snapshotPointerKey } from "../../src/storage/kv_keys.ts";
import type { IndexRecord } from "../../src/storage/index_records.ts";
import type { SnapshotPointer } from "../../src/storage/snapshot_store.ts";
import { randomDoc, readWholeSnapshot, startTestServer, type TestServer } from "../_helpers.ts";

const QUERIES = [
  { mode: "fulltext", query: "alpha beta" },
  { mode: "vector", query: "gamma delta" },
  { mode: "hybrid", query: "alpha gamma", filter: { n: { $gte: 10 } } },
];

/** Starts a server with an index of 60 documents, its snapshot written; returns the server and the index's id. */
async function serverWithIndex(env: Record<string, string> = {}): Promise<{ server: TestServer; indexId: string }> {
  const server = await startTestServer({ env });
  const docs = Array.from({ length: 60 }, (_, n) => randomDoc({ n }));
  await server.ok({ action: "createIndex", indexName: "kept", docs });
  await server.service.context.background.idle();
  const record = (await server.kv.get<IndexRecord>(indexKey("default", "kept"))).value!;
  return { server, indexId: record.id };
}

/** The hits of each of {@link QUERIES}. */
async function answers(server: TestServer): Promise<unknown[]> {
  return await Promise.all(QUERIES.map(async (query) => {
    const { hits } = await server.ok<{ hits: unknown[] }>({ action: "search", indexName: "kept", ...query });
    return hits;
  }));
}

function loads(server: TestServer, kind: "local" | "snapshot"): number {
  return server.service.context.metrics.loads().get(kind) ?? 0;
}

async function copyPath(server: TestServer, indexId: string): Promise<{ path: string; pointer: SnapshotPointer }> {
  const pointer = (await server.kv.get<SnapshotPointer>(snapshotPointerKey(indexId))).value!;
  return { path: `${dirname(server.kvPath)}/segments/${indexId}/${pointer.versionId}.snapshot`, pointer };
}

Deno.test("the snapshot writer keeps a copy, and a restart loads from it and answers as before", async () => {
  let { server, indexId } = await serverWithIndex();
  try {
    const { path, pointer } = await copyPath(server, indexId);
    const copy = await Deno.readFile(path);
    assert.deepEqual(copy, (await readWholeSnapshot(server.kv, indexId))!.bytes);
    assert.equal(copy.byteLength, pointer.bytes);
    const before = await answers(server);
    server = await server.restart();
    assert.deepEqual(await answers(server), before);
    assert.equal(loads(server, "local"), 1);
    assert.equal(loads(server, "snapshot"), 0);
  } finally {
    await server.close();
  }
});

Deno.test("a copy damaged or cut short is read from the store instead, and replaced by a whole one", async () => {
  let { server, indexId } = await serverWithIndex();
  try {
    const before = await answers(server);
    const { path } = await copyPath(server, indexId);
    const whole = await Deno.readFile(path);
    const damaged = [
      crypto.getRandomValues(new Uint8Array(whole.byteLength)),
      whole.subarray(0, whole.byteLength - 1),
      new Uint8Array(0),
    ];
    for (const bytes of damaged) {
      await Deno.writeFile(path, bytes);
      server = await server.restart();
      assert.deepEqual(await answers(server), before);
      assert.equal(loads(server, "snapshot"), 1, "read from the store");
      assert.deepEqual(await Deno.readFile(path), whole, "the copy is whole again");
    }
  } finally {
    await server.close();
  }
});

Deno.test("a copy of another version is never read: a new snapshot's copy replaces it", async () => {
  let { server, indexId } = await serverWithIndex();
  try {
    const { path: oldPath } = await copyPath(server, indexId);
    // Writes that outgrow a tenth of the snapshot and a MiB bring a new version.
    for (let round = 0; round < 2; round++) {
      const docs = Array.from({ length: 40 }, (_, n) => {
        const doc = randomDoc({ n: 100 + n });
        return { ...doc, text: `${doc.text} ${"lorem ipsum ".repeat(2_500)}` };
      });
      await server.ok({ action: "addDocs", indexName: "kept", docs });
      await server.service.context.background.idle();
    }
    const { path, pointer } = await copyPath(server, indexId);
    assert.notEqual(path, oldPath, "a new snapshot version");
    assert.equal((await Deno.stat(path)).size, pointer.bytes);
    await assert.rejects(() => Deno.stat(oldPath), Deno.errors.NotFound, "the old version's copy is pruned");
    const before = await answers(server);
    server = await server.restart();
    assert.deepEqual(await answers(server), before);
    assert.equal(loads(server, "local"), 1);
  } finally {
    await server.close();
  }
});

Deno.test("with SEGMENT_DIR=off no copy is kept and a restart reads the store", async () => {
  let { server } = await serverWithIndex({ SEGMENT_DIR: "off" });
  try {
    await assert.rejects(() => Deno.stat(`${dirname(server.kvPath)}/segments`), Deno.errors.NotFound);
    const before = await answers(server);
    server = await server.restart();
    assert.deepEqual(await answers(server), before);
    assert.equal(loads(server, "snapshot"), 1);
  } finally {
    await server.close();
  }
});
