/**
 * Settings across two real server processes over one KV file: a change made on one instance is used by the other's
 * very next search (which reads the index record), and `getIndex` there shows it within `METADATA_CACHE_MS`; a later
 * change replaces it on both, and the version it replaced is gone from the store.
 */
import assert from "node:assert/strict";
import { ok, serverEnvironment, type ServerProcess, startServerProcess } from "../_server_process.ts";

const METADATA_CACHE_MS = 250;

interface Result {
  hits: { id: string; pinned?: true }[];
}

const DOCS = [
  { id: "sofa", text: "a grey sofa with cushions" },
  { id: "couch", text: "a grey couch with cushions" },
  { id: "refund", text: "how to get a refund" },
  { id: "policy", text: "our returns policy" },
];

async function ids(server: ServerProcess, query: string): Promise<string[]> {
  const body = { action: "search", indexName: "shop", query, mode: "fulltext", typoTolerance: false, prefix: false };
  return (await ok<Result>(server, body)).hits.map((hit) => hit.id);
}

/** Polls `getIndex` on `server` until `test` accepts its settings; returns the milliseconds that took. */
async function settingsSeen(server: ServerProcess, test: (settings: unknown) => boolean): Promise<number> {
  const started = performance.now();
  for (;;) {
    const index = await ok<{ settings: unknown }>(server, { action: "getIndex", indexName: "shop" });
    if (test(index.settings)) return performance.now() - started;
    assert.ok(performance.now() - started < 5_000, `getIndex never showed the settings: ${JSON.stringify(index)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

Deno.test("a settings change on one instance is seen by another at once in search and within METADATA_CACHE_MS in getIndex", async () => {
  const env: Record<string, string> = {
    ...await serverEnvironment(),
    METADATA_CACHE_MS: String(METADATA_CACHE_MS),
    LOG_REQUESTS: "false",
  };
  await using a = await startServerProcess(env);
  await using b = await startServerProcess(env, a.key);
  await ok(a, { action: "createIndex", indexName: "shop", docs: DOCS });
  // B holds the index (and its empty settings) in memory before the change.
  assert.deepEqual(await ids(b, "sofa"), ["sofa"]);
  await ok(b, { action: "getIndex", indexName: "shop" });

  const synonyms = [{ words: ["sofa", "couch"] }];
  await ok(a, { action: "updateSettings", indexName: "shop", settings: { synonyms } });
  assert.deepEqual(await ids(b, "sofa"), ["sofa", "couch"], "B's next search uses A's synonyms");
  const waited = await settingsSeen(
    b,
    (settings) => JSON.stringify(settings) === JSON.stringify({ synonyms, pins: [] }),
  );
  assert.ok(waited <= METADATA_CACHE_MS + 150, `getIndex on B showed them after ${waited.toFixed(0)} ms`);

  // A second change, on B this time, replaces the first on both; the first version is deleted from the store.
  const pins = [{ query: "refund", ids: ["policy"] }];
  await ok(b, { action: "updateSettings", indexName: "shop", settings: { synonyms: [], pins } });
  assert.deepEqual(await ids(a, "sofa"), ["sofa"], "A no longer finds the synonym");
  assert.deepEqual(await ids(a, "refund"), ["policy", "refund"], "A puts B's pin first");
  await settingsSeen(a, (settings) => JSON.stringify(settings) === JSON.stringify({ synonyms: [], pins }));

  const kv = await Deno.openKv(env.DENO_KV_PATH!);
  try {
    const versions = new Set<unknown>();
    for await (const { key } of kv.list({ prefix: ["index_settings"] })) versions.add(key[2]);
    assert.equal(versions.size, 1, "only the current version of the settings is stored");
  } finally {
    kv.close();
  }
});
