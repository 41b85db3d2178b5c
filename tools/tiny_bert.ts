/**
 * Generates small BERT sentence-embedding models for tests and benchmarks: deterministic random weights in the real
 * ONNX + `config.json` + WordPiece `tokenizer.json` layout that transformers.js loads from a local directory.
 */
import onnxProto from "onnx-proto";
import type { onnx as Onnx } from "onnx-proto";

const { onnx } = onnxProto;

/** The shape of a generated BERT model. */
export interface BertShape {
  layers: number;
  hidden: number;
  heads: number;
  intermediate: number;
  /** Vocabulary size, at least the size of the built-in word list (about 300). */
  vocab: number;
  seed: number;
}

/** A tiny model for tests: one layer, hidden 32. */
export const TINY_BERT: BertShape = {
  layers: 1,
  hidden: 32,
  heads: 2,
  intermediate: 64,
  vocab: 400,
  seed: 1,
};

/** The exact shape of all-MiniLM-L6-v2, with random weights. */
export const MINILM_SHAPE: BertShape = {
  layers: 6,
  hidden: 384,
  heads: 12,
  intermediate: 1536,
  vocab: 30522,
  seed: 7,
};

/** A fast model with MiniLM's 384 dimensions: one layer, so that benchmarks can embed many documents quickly. */
export const FAST_384_SHAPE: BertShape = {
  layers: 1,
  hidden: 384,
  heads: 12,
  intermediate: 1536,
  vocab: 4096,
  seed: 11,
};

const MAX_POSITIONS = 512;
const SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
/** The whole words every generated vocabulary holds, for fixtures that should tokenize without [UNK]. */
export const VOCAB_WORDS = ("the of and to in is for on with as by at from that this it be are was or an not but " +
  "all can has have more new one will about into than some time what when which who why how where " +
  "search index document text vector model embed query data project key service store database " +
  "cat dog bird fish horse cow sheep lion tiger bear wolf fox mouse snake frog duck owl " +
  "red green blue yellow black white orange purple pink brown gray " +
  "apple banana cherry grape lemon mango melon peach pear plum berry bread cheese milk rice soup " +
  "car bus train plane ship bike road city town house home room door window table chair bed " +
  "sun moon star sky cloud rain snow wind storm river lake sea ocean mountain hill forest tree " +
  "run walk jump swim fly read write sing play eat drink sleep work learn teach build make " +
  "big small fast slow hot cold old young good bad happy sad long short high low open close " +
  "music movie book song game sport news story art film drama comedy science history math " +
  "computer phone network server code program software language english german french world " +
  "day night week month year morning evening today tomorrow " +
  "one two three four five six seven eight nine ten hundred thousand").split(" ");

/** Options of {@link writeBertModel}. */
export interface BertFiles {
  /**
   * Also writes `onnx/model_quantized.onnx`, what transformers.js loads for dtype `q8`: the same weights, each dense
   * layer's int8 per output column, run as onnxruntime's dynamic quantization runs them (the activations quantized to
   * uint8 per call, `MatMulInteger`, then rescaled to float), and the embedding tables int8 with one scale each, as it
   * stores them (so that the file is about a quarter of the float one, as a real export's is).
   */
  quantized?: boolean;
  /**
   * Writes a cross-encoder (`BertForSequenceClassification` with one logit) instead of an embedding model: `"pooled"`
   * scores a pair by a random classifier over the tanh-pooled `[CLS]` state, as real ones do; `"overlap"` adds to such
   * a score (squashed into ±0.4) how many of the second text's tokens the first text holds, so that tests can predict
   * the order.
   */
  crossEncoder?: CrossEncoderHead;
}

/** How a generated cross-encoder scores a pair: see {@link BertFiles}. */
export type CrossEncoderHead = "pooled" | "overlap";

/** Writes a model directory (config, tokenizer, `onnx/model.onnx`) for `shape` into `dir`. */
export async function writeBertModel(dir: string, shape: BertShape, files: BertFiles = {}): Promise<void> {
  const vocab = buildVocab(shape.vocab);
  await Deno.mkdir(`${dir}/onnx`, { recursive: true });
  await Deno.writeTextFile(`${dir}/config.json`, JSON.stringify(bertConfig(shape, files.crossEncoder), null, 2));
  await Deno.writeTextFile(`${dir}/tokenizer.json`, JSON.stringify(tokenizerJson(vocab)));
  await Deno.writeTextFile(`${dir}/tokenizer_config.json`, JSON.stringify(tokenizerConfig(), null, 2));
  await Deno.writeFile(`${dir}/onnx/model.onnx`, encodeBertOnnx(shape, false, files.crossEncoder));
  if (files.quantized) {
    await Deno.writeFile(`${dir}/onnx/model_quantized.onnx`, encodeBertOnnx(shape, true, files.crossEncoder));
  }
}

function buildVocab(size: number): string[] {
  const chars = "abcdefghijklmnopqrstuvwxyz0123456789.,!?;:'\"()-_/&%$#@*+=<>[]{}";
  const tokens = [...SPECIAL_TOKENS, ...chars, ...[...chars].map((c) => `##${c}`), ...new Set(VOCAB_WORDS)];
  if (tokens.length > size) throw new Error(`Vocabulary size ${size} is below the minimum ${tokens.length}`);
  const syllables = ["ka", "lo", "mi", "nu", "re", "sa", "ti", "vo", "xe", "zu", "ba", "de", "fi", "go", "hu"];
  for (let n = 0; tokens.length < size; n++) {
    let word = "";
    for (let rest = n; word.length === 0 || rest > 0; rest = Math.floor(rest / syllables.length)) {
      word += syllables[rest % syllables.length];
    }
    tokens.push(n % 2 === 0 ? word : `##${word}`);
  }
  return tokens;
}

function bertConfig(shape: BertShape, crossEncoder?: CrossEncoderHead): Record<string, unknown> {
  const head = crossEncoder === undefined ? {} : { id2label: { "0": "LABEL_0" }, label2id: { LABEL_0: 0 } };
  return {
    ...head,
    architectures: [crossEncoder === undefined ? "BertModel" : "BertForSequenceClassification"],
    model_type: "bert",
    hidden_size: shape.hidden,
    num_attention_heads: shape.heads,
    num_hidden_layers: shape.layers,
    intermediate_size: shape.intermediate,
    vocab_size: shape.vocab,
    max_position_embeddings: MAX_POSITIONS,
    type_vocab_size: 2,
    hidden_act: "gelu",
    layer_norm_eps: 1e-12,
    pad_token_id: 0,
  };
}

function tokenizerConfig(): Record<string, unknown> {
  return {
    tokenizer_class: "BertTokenizer",
    do_lower_case: true,
    model_max_length: MAX_POSITIONS,
    cls_token: "[CLS]",
    sep_token: "[SEP]",
    pad_token: "[PAD]",
    unk_token: "[UNK]",
    mask_token: "[MASK]",
    clean_up_tokenization_spaces: true,
  };
}

function tokenizerJson(vocab: string[]): Record<string, unknown> {
  const ids = Object.fromEntries(vocab.map((token, id) => [token, id]));
  const special = (token: string) => ({ id: token, ids: [ids[token]], tokens: [token] });
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKENS.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: {
      type: "BertNormalizer",
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: {
      type: "TemplateProcessing",
      single: [
        { SpecialToken: { id: "[CLS]", type_id: 0 } },
        { Sequence: { id: "A", type_id: 0 } },
        { SpecialToken: { id: "[SEP]", type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: "[CLS]", type_id: 0 } },
        { Sequence: { id: "A", type_id: 0 } },
        { SpecialToken: { id: "[SEP]", type_id: 0 } },
        { Sequence: { id: "B", type_id: 1 } },
        { SpecialToken: { id: "[SEP]", type_id: 1 } },
      ],
      special_tokens: { "[CLS]": special("[CLS]"), "[SEP]": special("[SEP]") },
    },
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: {
      type: "WordPiece",
      unk_token: "[UNK]",
      continuing_subword_prefix: "##",
      max_input_chars_per_word: 100,
      vocab: ids,
    },
  };
}

/** A seeded pseudo-random source (mulberry32) of roughly normal values. */
function normalSource(seed: number): () => number {
  let state = seed >>> 0;
  const uniform = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  // The sum of four uniforms, centred and scaled, is close enough to a unit normal for weights.
  return () => (uniform() + uniform() + uniform() + uniform() - 2) * Math.sqrt(3);
}

/** Builds the ONNX graph of a BERT encoder whose output is `last_hidden_state`, or of a cross-encoder's `logits`. */
function encodeBertOnnx(shape: BertShape, quantized: boolean, crossEncoder?: CrossEncoderHead): Uint8Array {
  const { hidden, heads, intermediate } = shape;
  const random = normalSource(shape.seed);
  const initializers: Onnx.ITensorProto[] = [];
  const nodes: Onnx.INodeProto[] = [];
  let nodeCount = 0;

  const tensor = (name: string, dims: number[], dataType: number, data: Float32Array | Int8Array) => {
    initializers.push({ name, dims, dataType, rawData: bytesOf(data) });
    return name;
  };
  const floats = (name: string, dims: number[], fill: () => number) =>
    tensor(name, dims, onnx.TensorProto.DataType.FLOAT, new Float32Array(dims.reduce((a, b) => a * b, 1)).map(fill));
  const weights = (name: string, dims: number[], scale: number) => floats(name, dims, () => random() * scale);
  const constant = (name: string, dims: number[], value: number) => floats(name, dims, () => value);
  const int64s = (name: string, values: number[]) => {
    const data = new BigInt64Array(values.map(BigInt));
    initializers.push({
      name,
      dims: [values.length],
      dataType: onnx.TensorProto.DataType.INT64,
      rawData: bytesOf(data),
    });
    return name;
  };
  const nodeOutputs = (opType: string, inputs: string[], count: number, attribute: Onnx.IAttributeProto[] = []) => {
    const name = `${opType.toLowerCase()}_${nodeCount++}`;
    const outputs = Array.from({ length: count }, (_, i) => i === 0 ? name : `${name}_${i}`);
    nodes.push({ opType, input: inputs, output: outputs, name, attribute });
    return outputs;
  };
  const node = (opType: string, inputs: string[], attribute: Onnx.IAttributeProto[] = []) =>
    nodeOutputs(opType, inputs, 1, attribute)[0]!;
  const int = (name: string, i: number) => ({ name, type: onnx.AttributeProto.AttributeType.INT, i });
  const ints = (name: string, values: number[]) => ({
    name,
    type: onnx.AttributeProto.AttributeType.INTS,
    ints: values,
  });
  const layerNorm = (input: string, prefix: string) =>
    node("LayerNormalization", [
      input,
      constant(`${prefix}.gamma`, [hidden], 1),
      constant(`${prefix}.beta`, [hidden], 0),
    ], [
      int("axis", -1),
      { name: "epsilon", type: onnx.AttributeProto.AttributeType.FLOAT, f: 1e-12 },
    ]);
  /** `input × weight + bias`; quantized, `weight` is int8 with a scale per output column, and `input` uint8. */
  const dense = (input: string, prefix: string, inSize: number, outSize: number) => {
    const weight = new Float32Array(inSize * outSize).map(() => random() / Math.sqrt(inSize));
    const bias = weights(`${prefix}.bias`, [outSize], 0.02);
    if (!quantized) {
      const product = node("MatMul", [input, tensor(`${prefix}.weight`, [inSize, outSize], FLOAT, weight)]);
      return node("Add", [product, bias]);
    }
    const { codes, scales } = quantizeColumns(weight, inSize, outSize);
    const [inputCodes, inputScale, inputZero] = nodeOutputs("DynamicQuantizeLinear", [input], 3);
    const codesName = tensor(`${prefix}.weight_int8`, [inSize, outSize], onnx.TensorProto.DataType.INT8, codes);
    const product = node("MatMulInteger", [inputCodes!, codesName, inputZero!]);
    // The shape onnxruntime's quantizer emits, which its optimizer fuses into one DynamicQuantizeMatMul.
    const scale = node("Mul", [inputScale!, tensor(`${prefix}.weight_scale`, [outSize], FLOAT, scales)]);
    const rescaled = node("Mul", [node("Cast", [product], [int("to", FLOAT)]), scale]);
    return node("Add", [rescaled, bias]);
  };

  const headShape = int64s("head_shape", [0, 0, heads, hidden / heads]);
  const mergedShape = int64s("merged_shape", [0, 0, hidden]);
  const splitHeads = (input: string, perm: number[]) =>
    node("Transpose", [node("Reshape", [input, headShape])], [ints("perm", perm)]);

  const sequenceLength = node("Slice", [node("Shape", ["input_ids"]), int64s("one", [1]), int64s("two", [2])]);
  const positions = node("Slice", [
    weights("embeddings.position", [MAX_POSITIONS, hidden], 0.1),
    int64s("zero", [0]),
    sequenceLength,
    int64s("axis_zero", [0]),
  ]);
  /** The rows of an embedding table that `ids` pick; quantized, the table is int8 with one scale. */
  const embedding = (name: string, rows: number, scale: number, ids: string) => {
    const table = new Float32Array(rows * hidden).map(() => random() * scale);
    if (!quantized) return node("Gather", [tensor(name, [rows, hidden], FLOAT, table), ids]);
    // As onnxruntime's dynamic quantization stores a Gather's table: the rows picked are dequantized after the Gather.
    const { codes, scales } = quantizeColumns(table, table.length, 1);
    const codesName = tensor(`${name}_int8`, [rows, hidden], onnx.TensorProto.DataType.INT8, codes);
    return node("DequantizeLinear", [node("Gather", [codesName, ids]), tensor(`${name}_scale`, [], FLOAT, scales)]);
  };
  const words = embedding("embeddings.word", shape.vocab, 1, "input_ids");
  const types = embedding("embeddings.token_type", 2, 0.1, "token_type_ids");
  let x = layerNorm(node("Add", [node("Add", [words, positions]), types]), "embeddings.norm");

  const mask = node("Cast", ["attention_mask"], [int("to", onnx.TensorProto.DataType.FLOAT)]);
  const maskBias = node("Unsqueeze", [
    node("Mul", [node("Sub", [constant("one_f", [], 1), mask]), constant("mask_fill", [], -10000)]),
    int64s("mask_axes", [1, 2]),
  ]);
  const scale = constant("attention_scale", [], 1 / Math.sqrt(hidden / heads));

  for (let layer = 0; layer < shape.layers; layer++) {
    const p = `layer${layer}`;
    const q = splitHeads(dense(x, `${p}.query`, hidden, hidden), [0, 2, 1, 3]);
    const k = splitHeads(dense(x, `${p}.key`, hidden, hidden), [0, 2, 3, 1]);
    const v = splitHeads(dense(x, `${p}.value`, hidden, hidden), [0, 2, 1, 3]);
    const scores = node("Add", [node("Mul", [node("MatMul", [q, k]), scale]), maskBias]);
    const context = node("MatMul", [node("Softmax", [scores], [int("axis", -1)]), v]);
    const merged = node("Reshape", [node("Transpose", [context], [ints("perm", [0, 2, 1, 3])]), mergedShape]);
    const attended = layerNorm(node("Add", [dense(merged, `${p}.attention_output`, hidden, hidden), x]), `${p}.norm1`);
    const h = dense(attended, `${p}.intermediate`, hidden, intermediate);
    const gelu = node("Mul", [
      node("Mul", [h, constant(`${p}.half`, [], 0.5)]),
      node("Add", [
        node("Erf", [node("Div", [h, constant(`${p}.sqrt2`, [], Math.SQRT2)])]),
        constant(`${p}.one`, [], 1),
      ]),
    ]);
    x = layerNorm(node("Add", [dense(gelu, `${p}.output`, intermediate, hidden), attended]), `${p}.norm2`);
  }

  /** How many tokens of each pair's second text (token type 1) its first text holds, special tokens aside: `[batch, 1]`. */
  const overlapCount = (mask: string) => {
    const words = new Float32Array(shape.vocab).fill(1).fill(0, 0, SPECIAL_TOKENS.length);
    const oneHot = node("Mul", [
      node("OneHot", [
        "input_ids",
        int64s("vocab_depth", [shape.vocab]),
        tensor("one_hot", [2], FLOAT, Float32Array.of(0, 1)),
      ]),
      tensor("word_tokens", [shape.vocab], FLOAT, words),
    ]);
    const second = node("Cast", ["token_type_ids"], [int("to", FLOAT)]);
    const tokenAxis = int64s("token_axis", [2]);
    const sequenceAxis = int64s("sequence_axis", [1]);
    const bag = (weight: string) =>
      node("ReduceSum", [node("Mul", [oneHot, node("Unsqueeze", [weight, tokenAxis])]), sequenceAxis], [
        int("keepdims", 0),
      ]);
    const inFirst = node("Min", [bag(node("Mul", [mask, node("Sub", ["one_f", second])])), "one_f"]);
    return node("ReduceSum", [node("Mul", [inFirst, bag(node("Mul", [mask, second]))]), int64s("vocab_axis", [1])]);
  };
  let output = tensorInfo("last_hidden_state", onnx.TensorProto.DataType.FLOAT, ["batch", "sequence", hidden]);
  if (crossEncoder === undefined) {
    nodes.push({ opType: "Identity", input: [x], output: ["last_hidden_state"], name: "output" });
  } else {
    // The [CLS] state, a tanh pooler and a classifier of one logit, as BertForSequenceClassification has them.
    const cls = node("Gather", [x, int64s("cls_index", [0])], [int("axis", 1)]);
    const pooled = node("Tanh", [dense(cls, "pooler", hidden, hidden)]);
    let logits = node("Reshape", [dense(pooled, "classifier", hidden, 1), int64s("logits_shape", [-1, 1])]);
    if (crossEncoder === "overlap") {
      logits = node("Add", [
        node("Mul", [node("Tanh", [logits]), constant("pooled_share", [], 0.4)]),
        overlapCount(mask),
      ]);
    }
    nodes.push({ opType: "Identity", input: [logits], output: ["logits"], name: "output" });
    output = tensorInfo("logits", onnx.TensorProto.DataType.FLOAT, ["batch", 1]);
  }

  const tokens = (name: string) => tensorInfo(name, onnx.TensorProto.DataType.INT64, ["batch", "sequence"]);
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: "quire-tests",
    opsetImport: [{ domain: "", version: 17 }],
    graph: {
      name: "bert",
      node: nodes,
      initializer: initializers,
      input: [tokens("input_ids"), tokens("attention_mask"), tokens("token_type_ids")],
      output: [output],
    },
  });
  return onnx.ModelProto.encode(model).finish();
}

const FLOAT = onnx.TensorProto.DataType.FLOAT;

/** Symmetric int8 codes of a row-major `rows × columns` matrix, with one scale per column (its largest value / 127). */
function quantizeColumns(
  matrix: Float32Array,
  rows: number,
  columns: number,
): { codes: Int8Array; scales: Float32Array } {
  const scales = new Float32Array(columns);
  for (let i = 0; i < matrix.length; i++) {
    const column = i % columns;
    scales[column] = Math.max(scales[column]!, Math.abs(matrix[i]!) / 127);
  }
  const codes = new Int8Array(rows * columns);
  for (let i = 0; i < matrix.length; i++) codes[i] = Math.round(matrix[i]! / (scales[i % columns]! || 1));
  return { codes, scales };
}

function tensorInfo(name: string, elemType: number, dims: (string | number)[]): Onnx.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType,
        shape: { dim: dims.map((d) => typeof d === "string" ? { dimParam: d } : { dimValue: d }) },
      },
    },
  };
}

function bytesOf(data: Float32Array | Int8Array | BigInt64Array): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

if (import.meta.main) {
  const [dir, shape = "tiny", kind] = Deno.args;
  if (dir === undefined || (shape !== "tiny" && shape !== "minilm") || (kind !== undefined && kind !== "reranker")) {
    console.error("Usage: deno run --allow-write tools/tiny_bert.ts <dir> [tiny|minilm] [reranker]");
    Deno.exit(2);
  }
  const crossEncoder = kind === undefined ? undefined : "pooled";
  await writeBertModel(dir, shape === "tiny" ? TINY_BERT : MINILM_SHAPE, { crossEncoder });
  console.log(`Wrote a generated ${shape} BERT ${kind ?? "embedding"} model to ${dir}`);
}
