/** How an index splits texts into passages: the most tokens per passage, and how many the next one repeats. */
import { ApiError } from "../api/api_error.ts";

/** An index's passage settings, fixed at creation. */
export interface PassageSettings {
  /** The most tokens of one passage, the model's special tokens included. */
  maxTokens: number;
  /** Tokens at the end of a passage that the next one starts with. */
  overlapTokens: number;
}

/** The most tokens per passage when `createIndex` names none (or the model's window, if smaller). */
export const DEFAULT_MAX_TOKENS = 256;

/** The overlap when `createIndex` names none: about one sentence. */
export const DEFAULT_OVERLAP_TOKENS = 32;

/** The fewest tokens of text a passage may hold. */
const MIN_TEXT_TOKENS = 8;

/**
 * The settings of a new index on a model that reads at most `window` tokens: those asked for, with defaults for the
 * rest; 400 naming the limits when `maxTokens` passes the window or `overlapTokens` is not below `maxTokens`.
 */
export function passageSettings(
  asked: Partial<PassageSettings> | undefined,
  model: { id: string; window: number; specialTokens: number },
): PassageSettings {
  const maxTokens = asked?.maxTokens ?? Math.min(DEFAULT_MAX_TOKENS, model.window);
  // Room for the longest code point a tokenizer may make (4 UTF-8 bytes, each a byte token) and a word marker.
  const least = model.specialTokens + MIN_TEXT_TOKENS;
  if (maxTokens > model.window || maxTokens < least) {
    throw new ApiError(
      400,
      `Invalid "options.passages.maxTokens": ${maxTokens} is outside what model "${model.id}" reads, ` +
        `${least} to ${model.window} tokens`,
    );
  }
  const overlapTokens = asked?.overlapTokens ?? Math.min(DEFAULT_OVERLAP_TOKENS, Math.floor(maxTokens / 4));
  if (overlapTokens >= maxTokens) {
    throw new ApiError(
      400,
      `Invalid "options.passages.overlapTokens": ${overlapTokens} must be less than maxTokens (${maxTokens})`,
    );
  }
  return { maxTokens, overlapTokens };
}
