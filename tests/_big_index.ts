/**
 * A server whose index "big" of 8-d client vectors is past the size from which an index has an HNSW graph, with texts
 * long enough that its log calls for snapshots: what the tests of the files kept beside a snapshot's copy load.
 */
import { dirname } from "node:path";
import { Embedder } from "../src/embedding/embedder.ts";
import { EXACT_SEARCH_MAX_VECTORS } from "../src/search/vector_candidates.ts";
import type { SearchIndex } from "../src/search/search_index.ts";
import { indexKey, snapshotPointerKey } from "../src/storage/kv_keys.ts";
import type { IndexRecord } from "../src/storage/index_records.ts";
import type { SnapshotPointer } from "../src/storage/snapshot_store.ts";
import { startTestServer, testModels, type TestServer } from "./_helpers.ts";
import { normals } from "./_vectors.ts";

/** The dimensions of "big"'s vectors. */
export const BIG_DIMS = 8;

/** Draws vectors for "big" from the normals of `seed`. */
export function bigVectors(seed: number): () => number[] {
  const normal = normals(seed);
  return () => Array.from({ length: BIG_DIMS }, normal);
}

/** The hits of "big" for a vector search of each of `queries`, a hybrid and a full-text one: what a load must answer as before. */
export async function bigAnswers(server: TestServer, queries: number[][]): Promise<unknown[]> {
  const searches = [
    ...queries.map((query) => ({ mode: "vector", vector: query, limit: 20 })),
    { mode: "hybrid", query: "doc 17", vector: queries[0], limit: 20 },
    { mode: "fulltext", query: "doc 1234", limit: 5 },
  ];
  return await Promise.all(searches.map(async (search) => {
    const { hits } = await server.ok<{ hits: unknown[] }>({ action: "search", indexName: "big", ...search });
    return hits;
  }));
}

/** A new server with "big" created and filled with documents whose vectors `vector` draws. */
export async function startWithBigIndex(vector: () => number[]): Promise<TestServer> {
  const registry = { ...await testModels(), "ext-8": { dimensions: BIG_DIMS, version: "ext-v1" } };
  const embedder = () => new Embedder(registry, { cacheDir: `${Deno.makeTempDirSync()}/models`, allowRemote: false });
  const server = await startTestServer({ embedder });
  try {
    await server.ok({ action: "createIndex", indexName: "big", modelId: "ext-8", docs: [] });
    const padding = ` ${"x".repeat(1_100)}`;
    for (let from = 0; from < EXACT_SEARCH_MAX_VECTORS + 2_000; from += 1_000) {
      const docs = Array.from({ length: 1_000 }, (_, i) => ({
        id: `d${from + i}`,
        text: `doc ${from + i}${padding}`,
        vector: vector(),
      }));
      await server.ok({ action: "addDocs", indexName: "big", docs });
    }
    return server;
  } catch (error) {
    await server.close();
    throw error;
  }
}

/** "big"'s record, and the path of its current snapshot's copy without the suffix. */
export async function bigCopy(server: TestServer): Promise<{ record: IndexRecord; base: string }> {
  const record = (await server.kv.get<IndexRecord>(indexKey("default", "big"))).value!;
  const pointer = (await server.kv.get<SnapshotPointer>(snapshotPointerKey(record.id))).value!;
  return { record, base: `${dirname(server.kvPath)}/segments/${record.id}/${pointer.versionId}` };
}

/** "big" as the server holds it. */
export async function bigIndex(server: TestServer): Promise<SearchIndex> {
  return await server.service.context.indexStates.get((await bigCopy(server)).record);
}
