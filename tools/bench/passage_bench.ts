/**
 * The documents issue's figures, on the running benchmark server: ingest of long documents in passages/s and docs/s,
 * the cost of a 10-document write of long documents on the large index against the small one and, per passage
 * embedded, against a write of short documents, and recall@10 of vector search counted in documents over passages.
 */
import type { Embedder } from "../../src/embedding/embedder.ts";
import { EXACT_SEARCH_MAX_VECTORS } from "../../src/search/vector_candidates.ts";
import { listDocs } from "../../src/storage/doc_records.ts";
import type { IndexRecord } from "../../src/storage/index_records.ts";
import { indexKey } from "../../src/storage/kv_keys.ts";
import type { ServerProcess } from "../../tests/_server_process.ts";
import { splitPassages } from "../../src/passages/split_passages.ts";
import { DEFAULT_MAX_TOKENS, DEFAULT_OVERLAP_TOKENS } from "../../src/passages/passage_settings.ts";
import { type BenchDoc, benchDocs, benchQueries, longDocs, ms, quantile } from "./_corpus.ts";
import { ok, timed } from "./_bench_helpers.ts";

/** What {@link measurePassages} runs on. */
export interface PassageBenchOptions {
  /** Long documents to ingest. */
  docs: number;
  /** The indexes of many and of few short documents, and their sizes. */
  large: { name: string; size: number };
  small: { name: string; size: number };
  /** Rounds of 10-document writes. */
  rounds: number;
  /** The server's KV file, read beside it for the exact ground truth. */
  kvPath: string;
  /** The benchmark's model, to embed the recall queries as the server does. */
  embedder: Embedder;
  modelId: string;
}

const BATCH = 50;
const RECALL_QUERIES = 100;
/** Documents of the recall index, in passages short enough that they are more than an exact scan takes. */
const RECALL_DOCS = 300;
const RECALL_PASSAGES = { maxTokens: 64, overlapTokens: 8 };
const DEFAULT_PASSAGES = { maxTokens: DEFAULT_MAX_TOKENS, overlapTokens: DEFAULT_OVERLAP_TOKENS };

/** Runs the figures and returns them as `[target, text]` lines. */
export async function measurePassages(
  server: ServerProcess,
  options: PassageBenchOptions,
): Promise<[string, string][]> {
  const lines: [string, string][] = [];
  const passageCount = async (indexName: string) =>
    (await ok<{ passageCount: number }>(server, { action: "getIndex", indexName })).passageCount;
  const ingest = async (indexName: string, count: number, passages = DEFAULT_PASSAGES) => {
    return await timed(async () => {
      await ok(server, { action: "createIndex", indexName, docs: [], options: { passages } });
      for (let start = 0; start < count; start += BATCH) {
        const docs = longDocs("long", start, Math.min(BATCH, count - start));
        await ok(server, { action: "addDocs", indexName, docs });
      }
    });
  };

  const took = await ingest("long", options.docs);
  const passages = await passageCount("long");
  lines.push([
    "13. ingest passages",
    `${options.docs} docs of ~2,000 words, ${passages} passages of ≤ 256 tokens, in ${(took / 1000).toFixed(1)} s: ` +
    `${(passages / took * 1000).toFixed(0)} passages/s, ${(options.docs / took * 1000).toFixed(1)} docs/s`,
  ]);

  // Writes of 10 long documents at both sizes, and of 10 short ones on the large index, interleaved; and the same
  // passages embedded in this process, to tell the cost of a write from that of its embedding.
  const tokens = await options.embedder.tokens(options.modelId);
  const embedded = async (docs: BenchDoc[]) => {
    const texts = docs.flatMap((doc) =>
      splitPassages(doc.text, tokens, DEFAULT_PASSAGES).map((span) => doc.text.slice(span.start, span.end))
    );
    return { passages: texts.length, ms: await timed(() => options.embedder.embed(options.modelId, texts)) };
  };
  const writes = { small: [] as number[], large: [] as number[], short: [] as number[] };
  const embeds = { long: [] as number[], short: [] as number[] };
  let longPassages = 0;
  for (let round = 0; round < options.rounds; round++) {
    const start = 9_000_000 + round * 10;
    const long = longDocs("wl", start, 10);
    const short = benchDocs("ws", start, 10);
    for (const kind of round % 2 === 0 ? ["small", "large", "short"] as const : ["short", "large", "small"] as const) {
      const docs = kind === "short" ? short : long;
      const indexName = kind === "small" ? options.small.name : options.large.name;
      writes[kind].push(await timed(() => ok(server, { action: "addDocs", indexName, docs })));
      await ok(server, { action: "deleteDocs", indexName, docIds: docs.map((doc) => doc.id) });
    }
    const [longEmbed, shortEmbed] = [await embedded(long), await embedded(short)];
    embeds.long.push(longEmbed.ms);
    embeds.short.push(shortEmbed.ms);
    longPassages = longEmbed.passages;
  }
  const median = (samples: number[]) => quantile(samples, 0.5);
  const [small, large, short] = [median(writes.small), median(writes.large), median(writes.short)];
  lines.push([
    "13. addDocs 10 long",
    `${longPassages} passages: median ${ms(small)} at ${options.small.size} docs, ${ms(large)} at ` +
    `${options.large.size} docs: ${(large / small).toFixed(2)}× (target ≤ 1.5×)`,
  ]);
  lines.push([
    "13. per passage",
    `at ${options.large.size} docs, 10 long docs ${ms(large / longPassages)} per passage embedded, ` +
    `${(large / median(embeds.long)).toFixed(2)}× their embedding alone; 10 short docs ${ms(short / 10)} per ` +
    `passage, ${(short / median(embeds.short)).toFixed(2)}× their embedding alone`,
  ]);

  // Recall in documents: a document's exact score is its best passage's.
  await ingest("long-recall", RECALL_DOCS, RECALL_PASSAGES);
  const recallPassages = await passageCount("long-recall");
  const queries = benchQueries(RECALL_QUERIES, 13);
  const served: string[][] = [];
  for (const query of queries) {
    const body = { action: "search", indexName: "long-recall", query, mode: "vector", include: [] };
    served.push((await ok<{ hits: { id: string }[] }>(server, body)).hits.map((hit) => hit.id));
  }
  const docs = await storedPassageVectors(options.kvPath, "long-recall");
  const queryVectors = await options.embedder.embed(options.modelId, queries);
  let found = 0;
  queryVectors.forEach((query, q) => {
    const scores = docs.map(({ vectors }) => Math.max(...vectors.map((vector) => dot(query, vector))));
    const best = scores.map((_, i) => i).sort((a, b) =>
      scores[b]! - scores[a]! || (docs[a]!.id < docs[b]!.id ? -1 : 1)
    );
    const truth = new Set(best.slice(0, 10).map((i) => docs[i]!.id));
    found += served[q]!.filter((id) => truth.has(id)).length;
  });
  lines.push([
    "13. recall@10 docs",
    `${(found / (RECALL_QUERIES * 10)).toFixed(3)} against the exact best passage per document, ${RECALL_DOCS} ` +
    `docs in ${recallPassages} passages of ≤ ${RECALL_PASSAGES.maxTokens} tokens (${
      recallPassages > EXACT_SEARCH_MAX_VECTORS ? "HNSW" : "exact scan"
    }), ${RECALL_QUERIES} queries (target ≥ 0.95)`,
  ]);
  return lines;
}

/** Every document of an index with its passages' vectors, read from the store. */
async function storedPassageVectors(
  kvPath: string,
  indexName: string,
): Promise<{ id: string; vectors: Float32Array[] }[]> {
  using kv = await Deno.openKv(kvPath);
  const record = (await kv.get<IndexRecord>(indexKey("default", indexName))).value!;
  const docs: { id: string; vectors: Float32Array[] }[] = [];
  for await (const [id, doc] of listDocs(kv, record.id)) {
    docs.push({ id, vectors: doc.passages.map((passage) => passage.vector) });
  }
  return docs;
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}
