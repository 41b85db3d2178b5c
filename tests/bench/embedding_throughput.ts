/**
 * Target 6: the embedder (texts sorted by length, batched, one reused ONNX session per model) against one pipeline
 * call per document, on a model with the exact shape of all-MiniLM-L6-v2 and texts of 160 tokens.
 */
import { pipeline } from "@huggingface/transformers";
import { Embedder } from "../../src/embedding/embedder.ts";
import { MINILM_SHAPE, VOCAB_WORDS, writeBertModel } from "../_model.ts";
import { random } from "./_corpus.ts";

const TEXTS = 64;
/** 158 whole-word tokens plus [CLS] and [SEP]. */
const WORDS_PER_TEXT = 158;

/** Returns the figure line. */
export async function measureEmbeddingThroughput(dir: string): Promise<string> {
  await writeBertModel(`${dir}/minilm`, MINILM_SHAPE);
  const next = random(3);
  const words = VOCAB_WORDS.filter((word) => /^[a-z]+$/.test(word));
  const texts = Array.from(
    { length: TEXTS },
    () => Array.from({ length: WORDS_PER_TEXT }, () => words[Math.floor(next() * words.length)]).join(" "),
  );
  const embedder = new Embedder({ "svc-minilm": { source: `${dir}/minilm`, version: "x", dtype: "fp32" } }, {
    cacheDir: `${dir}/cache`,
    allowRemote: false,
  });
  const extractor = await pipeline("feature-extraction", `${dir}/minilm`, { dtype: "fp32" });
  try {
    await embedder.embed("svc-minilm", texts.slice(0, 2));
    await extractor(texts[0]!, { pooling: "mean", normalize: true });
    let start = performance.now();
    for (const text of texts) await extractor(text, { pooling: "mean", normalize: true });
    const single = performance.now() - start;
    start = performance.now();
    await embedder.embed("svc-minilm", texts);
    const batched = performance.now() - start;
    const tokens = extractor.tokenizer(texts[0]!).input_ids.dims[1];
    return `${TEXTS} texts of ${tokens} tokens on a MiniLM-shaped model: one call per text ` +
      `${(TEXTS / single * 1000).toFixed(1)} texts/s, batched ${(TEXTS / batched * 1000).toFixed(1)} texts/s: ` +
      `${(single / batched).toFixed(2)}× (target ≥ 1.5×)`;
  } finally {
    await extractor.dispose();
    await embedder.dispose();
  }
}
