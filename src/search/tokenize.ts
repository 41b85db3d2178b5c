/**
 * Splits text into the terms that full-text search matches: compatibility characters folded (`ﬁ` → `fi`, `²` → `2`),
 * Latin, Greek and Cyrillic diacritics removed (`é` → `e`), lower-cased, and split at every character that is not a
 * letter, mark or digit, in any script. Marks of other scripts (Devanagari or Thai vowel signs) stay: they are letters
 * there, not accents.
 */

/** The combining diacritical marks block, which holds the accents of Latin, Greek and Cyrillic. */
const DIACRITICS = /[\u0300-\u036f]+/g;
const SEPARATORS = /[^\p{L}\p{M}\p{N}]+/u;

/** The terms of `text` in order, repeats included. */
export function tokenize(text: string): string[] {
  const folded = text.normalize("NFKD").replace(DIACRITICS, "").normalize("NFKC").toLowerCase();
  return folded.split(SEPARATORS).filter((term) => term !== "");
}
