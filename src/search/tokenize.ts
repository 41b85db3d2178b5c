/**
 * Splits text into the terms that full-text search matches: lower-cased, without diacritics, split at every
 * character that is not a letter or a digit, in any script.
 */

const DIACRITICS = /\p{M}+/gu;
const SEPARATORS = /[^\p{L}\p{N}]+/u;

/** The terms of `text` in order, repeats included. */
export function tokenize(text: string): string[] {
  return text.normalize("NFKD").replace(DIACRITICS, "").toLowerCase().split(SEPARATORS).filter((term) => term !== "");
}
