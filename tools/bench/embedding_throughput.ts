/**
 * Embedding throughput on a model with the exact shape of all-MiniLM-L6-v2 and texts of 160 tokens: the embedder
 * (texts sorted by length, batched, one reused ONNX session per model) against one pipeline call per document; and the
 * embedder in fp32 against q8 (the built-in registry's dtype), each as a share of this CPU's fp32 peak.
 * `deno task bench:embedding` runs it alone; `deno task bench` runs it last.
 */
import { pipeline } from "@huggingface/transformers";
import { Embedder } from "../../src/embedding/embedder.ts";
import { type BertShape, MINILM_SHAPE, VOCAB_WORDS, writeBertModel } from "../tiny_bert.ts";
import { random } from "./_corpus.ts";

const TEXTS = 64;
/** 158 whole-word tokens plus [CLS] and [SEP]. */
const WORDS_PER_TEXT = 158;
/**
 * Single-precision FLOPs per cycle per core with AVX2 and FMA on two 256-bit FMA pipes (Zen 2 and later, Intel since
 * Haswell): 2 pipes × 8 lanes × 2 (a multiply and an add).
 */
const FLOPS_PER_CYCLE = 32;

/** The figure lines, each as [target, text]. */
export async function measureEmbeddingThroughput(dir: string): Promise<[string, string][]> {
  await writeBertModel(`${dir}/minilm`, MINILM_SHAPE, { quantized: true });
  const next = random(3);
  const words = VOCAB_WORDS.filter((word) => /^[a-z]+$/.test(word));
  const texts = Array.from(
    { length: TEXTS },
    () => Array.from({ length: WORDS_PER_TEXT }, () => words[Math.floor(next() * words.length)]).join(" "),
  );
  const source = `${dir}/minilm`;
  const embedder = new Embedder({
    "fp32": { source, version: "x", dtype: "fp32" },
    "q8": { source, version: "x", dtype: "q8" },
  }, { cacheDir: `${dir}/cache`, allowRemote: false });
  const extractor = await pipeline("feature-extraction", source, { dtype: "fp32" });
  try {
    await embedder.embed("fp32", texts.slice(0, 2));
    await embedder.embed("q8", texts.slice(0, 2));
    await extractor(texts[0]!, { pooling: "mean", normalize: true });
    let start = performance.now();
    for (const text of texts) await extractor(text, { pooling: "mean", normalize: true });
    const single = performance.now() - start;
    const tokens = extractor.tokenizer(texts[0]!).input_ids.dims[1] as number;
    // fp32 and q8 in alternating rounds, so that a noisy moment of the machine hits both.
    const took = { fp32: 0, q8: 0 };
    const vectors: Record<string, Float32Array[]> = {};
    for (let round = 0; round < 2; round++) {
      for (const dtype of ["fp32", "q8"] as const) {
        start = performance.now();
        vectors[dtype] = await embedder.embed(dtype, texts);
        took[dtype] += performance.now() - start;
      }
    }
    const rate = (ms: number) => 2 * TEXTS / ms * 1000;
    const [fp32, q8] = [rate(took.fp32), rate(took.q8)];
    const cosines = vectors.fp32!.map((vector, i) => vector.reduce((sum, x, j) => sum + x * vectors.q8![i]![j]!, 0));
    const peak = await fp32PeakFlops();
    const share = (perSecond: number) =>
      peak === undefined
        ? ""
        : `, ${(perSecond * textFlops(MINILM_SHAPE, tokens) / peak.flops * 100).toFixed(1)}% of peak`;
    return [
      [
        "6. embedding",
        `${TEXTS} texts of ${tokens} tokens on a MiniLM-shaped model: one call per text ` +
        `${(TEXTS / single * 1000).toFixed(1)} texts/s, batched ${(TEXTS / took.fp32 * 2000).toFixed(1)} texts/s: ` +
        `${(single / took.fp32 * 2).toFixed(2)}×`,
      ],
      [
        "10. embedding dtype",
        `fp32 ${fp32.toFixed(1)} texts/s${share(fp32)}; q8 ${q8.toFixed(1)} texts/s${share(q8)}: q8 ` +
        `${(q8 / fp32).toFixed(2)}× fp32 (target ≥ 1.5×); cosine q8 to fp32 ${Math.min(...cosines).toFixed(4)} ` +
        `at least`,
      ],
      [
        "10. peak",
        peak === undefined
          ? "unknown: /proc/cpuinfo gives no clock"
          : `${(peak.flops / 1e9).toFixed(1)} GFLOP/s fp32 = ${peak.cores} cores × ${peak.ghz.toFixed(3)} GHz ` +
            `(bogomips / 2) × ${FLOPS_PER_CYCLE} FLOP/cycle (AVX2 FMA); a text is ` +
            `${(textFlops(MINILM_SHAPE, tokens) / 1e9).toFixed(2)} GFLOP (its matrix products)`,
      ],
    ];
  } finally {
    await extractor.dispose();
    await embedder.dispose();
  }
}

/**
 * The floating-point operations of one text of `tokens` tokens through a BERT encoder of `shape`: per layer, the
 * dense products (query, key, value, attention output, and the two feed-forward ones) and the attention's two
 * products; the embeddings, norms, softmax and GELU are left out, as they are small beside them.
 */
function textFlops(shape: BertShape, tokens: number): number {
  const { hidden, intermediate, layers } = shape;
  const dense = 2 * tokens * (4 * hidden * hidden + 2 * hidden * intermediate);
  const attention = 2 * 2 * tokens * tokens * hidden;
  return layers * (dense + attention);
}

/** This machine's fp32 peak from its cores and clock (bogomips is twice the clock on x86 Linux), if /proc says. */
async function fp32PeakFlops(): Promise<{ flops: number; cores: number; ghz: number } | undefined> {
  const cpuinfo = await Deno.readTextFile("/proc/cpuinfo").catch(() => "");
  const bogomips = cpuinfo.match(/^bogomips\s*:\s*([\d.]+)/m)?.[1];
  if (bogomips === undefined) return undefined;
  const ghz = Number(bogomips) / 2 / 1000;
  const cores = navigator.hardwareConcurrency;
  return { flops: cores * ghz * 1e9 * FLOPS_PER_CYCLE, cores, ghz };
}

if (import.meta.main) {
  const dir = await Deno.makeTempDir({ prefix: "quire-embedding-bench-" });
  try {
    for (const [target, text] of await measureEmbeddingThroughput(dir)) console.log(`${target.padEnd(22)} ${text}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
