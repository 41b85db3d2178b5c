/**
 * How one language's texts turn into the terms full-text search matches. A word is a run of letters, marks and digits
 * in any script. It is folded (compatibility characters such as `ﬁ` → `fi`, Latin, Greek and Cyrillic diacritics
 * removed, lower case), then stemmed by the language's stemmer, so that "Läufer" and "laufer" are one term and
 * "running" and "runs" another. Marks of other scripts (Devanagari or Thai vowel signs) stay: they are letters there.
 */
import { DEFAULT_LANGUAGE, type LanguageRules, languageRules } from "./languages.ts";

/** One word of a text: where it is (UTF-16 code units, `text.slice(start, end)`), folded, and the term it indexes as. */
export interface Word {
  start: number;
  end: number;
  surface: string;
  term: string;
}

/** The combining diacritical marks block, which holds the accents of Latin, Greek and Cyrillic. */
const DIACRITICS = /[\u0300-\u036f]+/g;
const WORD = /[\p{L}\p{M}\p{N}]+/gu;
const SEPARATORS = /[^\p{L}\p{M}\p{N}]+/u;
const ASCII_WORD = /^[A-Za-z0-9]*$/;
/** Stems remembered per language before the memo starts over: a vocabulary, not a corpus. */
const MAX_MEMO = 100_000;

/** The analyzer of one language. */
export class Analyzer {
  readonly #rules: LanguageRules;
  readonly #stopWords: ReadonlySet<string>;
  readonly #stems = new Map<string, string>();

  constructor(readonly language: string, rules: LanguageRules) {
    this.#rules = rules;
    this.#stopWords = new Set(rules.stopWords.flatMap((word) => foldWord(word)));
  }

  /** The terms of `text` in order, repeats included. */
  terms(text: string): string[] {
    const terms: string[] = [];
    for (const match of text.matchAll(WORD)) {
      for (const surface of foldWord(match[0])) terms.push(this.stem(surface));
    }
    return terms;
  }

  /** The words of `text` in order, with their offsets. */
  words(text: string): Word[] {
    const words: Word[] = [];
    for (const match of text.matchAll(WORD)) {
      const start = match.index;
      const end = start + match[0].length;
      for (const surface of foldWord(match[0])) words.push({ start, end, surface, term: this.stem(surface) });
    }
    return words;
  }

  /** The folded words of a query, without the language's stop words unless the query is nothing else. */
  queryWords(query: string): string[] {
    const surfaces = [...query.matchAll(WORD)].flatMap((match) => foldWord(match[0]));
    const kept = surfaces.filter((surface) => !this.#stopWords.has(surface));
    return kept.length > 0 ? kept : surfaces;
  }

  /** The term a folded word indexes as. */
  stem(surface: string): string {
    let term = this.#stems.get(surface);
    if (term === undefined) {
      term = this.#rules.stem(surface) || surface;
      if (this.#stems.size >= MAX_MEMO) this.#stems.clear();
      this.#stems.set(surface, term);
    }
    return term;
  }
}

/** A word folded: compatibility forms and diacritics removed, lower case; rarely more than one word (`½` → `1`, `2`). */
function foldWord(word: string): string[] {
  if (ASCII_WORD.test(word)) return [word.toLowerCase()];
  const folded = word.normalize("NFKD").replace(DIACRITICS, "").normalize("NFKC").toLowerCase();
  return folded.split(SEPARATORS).filter((part) => part !== "");
}

const analyzers = new Map<string, Analyzer>();

/** The analyzer of `language` (one per language, shared); throws for a name that is not a language. */
export function analyzerFor(language: string = DEFAULT_LANGUAGE): Analyzer {
  let analyzer = analyzers.get(language);
  if (analyzer === undefined) {
    const rules = languageRules(language);
    if (rules === undefined) throw new RangeError(`Unknown language "${language}"`);
    analyzers.set(language, analyzer = new Analyzer(language, rules));
  }
  return analyzer;
}
