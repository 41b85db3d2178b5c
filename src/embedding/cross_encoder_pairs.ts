/**
 * How a cross-encoder reads (query, text) pairs: its window, the token counts that requests are checked against, and
 * one model run over a batch of pairs, each cut to the window and padded to the batch's longest.
 */
import type { PreTrainedTokenizer } from "@huggingface/transformers";
import type { TextClassifier } from "./transformers_runtime.ts";

/** An error of loading or running a cross-encoder. */
export class CrossEncoderError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CrossEncoderError";
  }
}

/** How a cross-encoder counts tokens. */
export interface PairTokens {
  /** The most tokens the model reads in one (query, text) pair, special tokens included. */
  window: number;
  /** The tokens of one text, special tokens not included. */
  count(text: string): number;
}

/** A cross-encoder's window: the least of what its tokenizer and its position embeddings allow (512 when neither says). */
export function pairWindow({ tokenizer, model }: TextClassifier): number {
  const positions = (model.config as { max_position_embeddings?: number }).max_position_embeddings;
  const window = Math.min(Number(tokenizer.model_max_length) || Infinity, positions ?? Infinity);
  return Number.isFinite(window) ? window : 512;
}

/** The token counts of `tokenizer`, for a model of `window` tokens. */
export function pairTokens(tokenizer: PreTrainedTokenizer, window: number): PairTokens {
  return { window, count: (text) => tokenizer.encode(text, { add_special_tokens: false }).length };
}

/** The token ids of one pair, as the tokenizer's template joins them. */
interface PairEncoding {
  input_ids: number[];
  attention_mask: number[];
  token_type_ids?: number[];
}

/** Runs the model on (query, text) pairs, each cut to the window and padded to the batch's longest, and reads its logits. */
export async function pairLogits(
  classifier: TextClassifier,
  window: number,
  query: string,
  texts: string[],
): Promise<Float32Array> {
  const { tokenizer, model, int64Tensor } = classifier;
  const pairs = texts.map((text) =>
    fitted(
      tokenizer(query, { text_pair: text, return_tensor: false, return_token_type_ids: true }) as PairEncoding,
      window,
    )
  );
  const rows = pairs.length;
  const length = Math.max(...pairs.map((pair) => pair.input_ids.length));
  const ids = new BigInt64Array(rows * length).fill(BigInt(tokenizer.pad_token_id ?? 0));
  const mask = new BigInt64Array(rows * length);
  const types = new BigInt64Array(rows * length);
  pairs.forEach((pair, row) => {
    pair.input_ids.forEach((id, i) => {
      ids[row * length + i] = BigInt(id);
      mask[row * length + i] = BigInt(pair.attention_mask[i]!);
      types[row * length + i] = BigInt(pair.token_type_ids?.[i] ?? 0);
    });
  });
  const dims = [rows, length];
  const { logits } = await model({
    input_ids: int64Tensor(ids, dims),
    attention_mask: int64Tensor(mask, dims),
    token_type_ids: int64Tensor(types, dims),
  });
  const [outRows, labels] = logits.dims as number[];
  if (outRows !== rows || labels !== 1) {
    throw new CrossEncoderError(`A cross-encoder must answer one logit per pair, not logits of shape [${logits.dims}]`);
  }
  return Float32Array.from(logits.data as Float32Array);
}

/**
 * A pair cut to `window` tokens: the text's last tokens go, and the template's closing token (e.g. `[SEP]`) stays.
 * The query comes first in the pair, so it is never cut where it fits.
 */
function fitted(pair: PairEncoding, window: number): PairEncoding {
  if (pair.input_ids.length <= window) return pair;
  const cut = (values: number[]) => [...values.slice(0, window - 1), values.at(-1)!];
  return {
    input_ids: cut(pair.input_ids),
    attention_mask: cut(pair.attention_mask),
    ...(pair.token_type_ids === undefined ? {} : { token_type_ids: cut(pair.token_type_ids) }),
  };
}
