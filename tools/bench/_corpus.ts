/** Deterministic benchmark fixtures: documents and queries built from words every generated vocabulary holds. */
import { VOCAB_WORDS } from "../tiny_bert.ts";

/** A deterministic pseudo-random generator, so that runs compare. */
export function random(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
}

const WORDS = VOCAB_WORDS.filter((word) => word.length > 2);

/** Builds sentences of words drawn with a Zipf-like skew, as in natural text. */
export function sentences(seed: number): (words: number) => string {
  const next = random(seed);
  return (words) => Array.from({ length: words }, () => WORDS[Math.floor(WORDS.length * next() ** 2.5)]!).join(" ");
}

/** A benchmark document. */
export interface BenchDoc {
  id: string;
  text: string;
  metadata: { category: string; year: number };
}

/** `count` documents of 20 to 60 words, ids `${prefix}${n}` from `start`. */
export function benchDocs(prefix: string, start: number, count: number): BenchDoc[] {
  const sentence = sentences(start + 1);
  const next = random(start + 7);
  return Array.from({ length: count }, (_, i) => ({
    id: `${prefix}${start + i}`,
    text: sentence(20 + Math.floor(next() * 40)),
    metadata: benchMetadata(start + i),
  }));
}

/** The metadata of benchmark document `n`: one of 10 categories and one of 25 years, in turns. */
export function benchMetadata(n: number): BenchDoc["metadata"] {
  return { category: `c${n % 10}`, year: 2000 + (n % 25) };
}

/**
 * `count` documents of about `words` words each, in sentences of 8 to 24 words that start with a capital and end with a
 * period, so that they split into passages at sentence ends as prose does.
 */
export function longDocs(prefix: string, start: number, count: number, words = 2_000): BenchDoc[] {
  const sentence = sentences(start + 3);
  const next = random(start + 5);
  return Array.from({ length: count }, (_, i) => {
    const parts: string[] = [];
    for (let written = 0; written < words;) {
      const length = 8 + Math.floor(next() * 17);
      const text = sentence(length);
      parts.push(`${text[0]!.toUpperCase()}${text.slice(1)}.`);
      written += length;
    }
    return {
      id: `${prefix}${start + i}`,
      text: parts.join(" "),
      metadata: benchMetadata(start + i),
    };
  });
}

/** Queries of 2 to 4 words. */
export function benchQueries(count: number, seed = 99): string[] {
  const sentence = sentences(seed);
  const next = random(seed + 1);
  return Array.from({ length: count }, () => sentence(2 + Math.floor(next() * 3)));
}

/** The value at quantile `q` (0..1) of unsorted samples. */
export function quantile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;
}

/** Milliseconds with one decimal. */
export function ms(value: number): string {
  return `${value.toFixed(1)} ms`;
}

/**
 * A real vocabulary: the words of Debian's list at `path` (`wamerican` by default; `wngerman` at
 * /usr/share/dict/ngerman) of three letters or more, or the generated model's words where it is not installed.
 */
export async function dictionaryWords(path = "/usr/share/dict/words"): Promise<string[]> {
  try {
    const words = (await Deno.readTextFile(path)).split("\n");
    return words.filter((word) => /^\p{Ll}{3,}$/u.test(word));
  } catch {
    console.error(`No ${path} (apt-get install wamerican): the generated vocabulary stands in`);
    return VOCAB_WORDS;
  }
}
