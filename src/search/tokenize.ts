/**
 * Splits text into the terms that full-text search matches: lower-cased, without diacritics, split at every
 * character that is not a letter or a digit, in any script. Each term appears once, as Orama's scoring expects.
 */

const DIACRITICS = /\p{M}+/gu;
const SEPARATORS = /[^\p{L}\p{N}]+/u;

/** The distinct terms of `text`, in order of first appearance. */
export function tokenize(text: string): string[] {
  const terms = text.normalize("NFKD").replace(DIACRITICS, "").toLowerCase().split(SEPARATORS);
  return [...new Set(terms.filter((term) => term !== ""))];
}
