/**
 * What `EMBEDDING_BACKEND=wasm` costs: embedding speed of onnxruntime-web against onnxruntime-node on generated models
 * (and how far apart their vectors are), and an exact vector scan against the HNSW graph at 100,000 documents.
 * Run: `npx -y deno@2.9.6 run -A tools/bench/wasm_backend.ts`.
 */
import { Embedder } from "../../src/embedding/embedder.ts";
import type { EmbeddingBackend } from "../../src/embedding/transformers_runtime.ts";
import { loadAnnGraphs } from "../../src/search/ann_graphs.ts";
import { SearchIndex } from "../../src/search/search_index.ts";
import { MINILM_SHAPE, TINY_BERT, VOCAB_WORDS, writeBertModel } from "../tiny_bert.ts";
import { random } from "./_corpus.ts";

const TEXTS = 64;
const WORDS_PER_TEXT = 158;
const QUERIES = 16;

async function compareEmbedding(dir: string): Promise<void> {
  const next = random(3);
  const words = VOCAB_WORDS.filter((word) => /^[a-z]+$/.test(word));
  const texts = Array.from(
    { length: TEXTS },
    () => Array.from({ length: WORDS_PER_TEXT }, () => words[Math.floor(next() * words.length)]).join(" "),
  );
  for (const [name, shape] of [["tiny", TINY_BERT], ["MiniLM-shaped", MINILM_SHAPE]] as const) {
    await writeBertModel(`${dir}/${name}`, shape);
    const registry = { m: { source: `${dir}/${name}`, version: "x", dtype: "fp32" as const } };
    const vectors: Float32Array[][] = [];
    for (const backend of ["native", "wasm"] as EmbeddingBackend[]) {
      const embedder = new Embedder(registry, { cacheDir: `${dir}/cache`, allowRemote: false, backend });
      try {
        let start = performance.now();
        await embedder.load("m");
        const load = performance.now() - start;
        await embedder.embed("m", texts.slice(0, 2));
        start = performance.now();
        vectors.push(await embedder.embed("m", texts));
        const batched = performance.now() - start;
        start = performance.now();
        for (const text of texts.slice(0, QUERIES)) await embedder.embed("m", [text.split(" ", 8).join(" ")]);
        const query = (performance.now() - start) / QUERIES;
        console.log(
          `${name} ${backend}: first load ${load.toFixed(0)} ms, ${TEXTS} texts of 160 tokens ` +
            `${(TEXTS / batched * 1000).toFixed(1)} texts/s, an 8-word query ${query.toFixed(2)} ms`,
        );
      } finally {
        await embedder.dispose();
      }
    }
    const [native, wasm] = vectors as [Float32Array[], Float32Array[]];
    const worst = Math.min(...native.map((vector, i) => vector.reduce((sum, x, d) => sum + x * wasm[i]![d]!, 0)));
    console.log(`${name}: worst cosine between native and wasm vectors ${worst.toFixed(8)}`);
  }
}

async function compareScan(docs: number): Promise<void> {
  const next = random(5);
  const changes = Array.from({ length: docs }, (_, i) => {
    const text = `w${i % 97}`;
    const vector = Float32Array.from({ length: 384 }, () => next() - 0.5);
    return { id: `d${i}`, doc: { text, passages: [{ start: 0, end: text.length, vector }] }, previousParts: 0 };
  });
  for (const graphs of [undefined, await loadAnnGraphs()]) {
    const index = new SearchIndex({ revision: 1, graphs });
    for (let i = 0; i < docs; i += 1000) index.apply(changes.slice(i, i + 1000));
    index.flushGraph();
    const times = Array.from({ length: 31 }, () => {
      const vector = Float32Array.from({ length: 384 }, () => next() - 0.5);
      const start = performance.now();
      index.search({ mode: "vector", text: "", vector, offset: 0, limit: 10 });
      return performance.now() - start;
    }).sort((a, b) => a - b);
    console.log(`${docs} docs of 384-d, ${graphs ? "HNSW graph" : "exact scan"}: median ${times[15]!.toFixed(2)} ms`);
  }
}

if (import.meta.main) {
  const dir = await Deno.makeTempDir({ prefix: "quire-wasm-bench-" });
  try {
    await compareEmbedding(dir);
    await compareScan(100_000);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
