/**
 * The scale benchmark's corpus of a real vocabulary: documents of 12 words drawn from Debian's `wamerican` (by
 * `dictionaryText`, as `bench:typos` and `bench:synonyms` draw theirs) with the metadata of `benchDocs`, and queries of
 * its words.
 */
import { mulberry32 } from "../../src/util/seeded_random.ts";
import { dictionaryText } from "./_client_vectors.ts";
import { type BenchDoc, benchMetadata } from "./_corpus.ts";

/** The seed of the texts: that of `bench:synonyms`, so that document `n` has the text of its indexes' `d${n}`. */
const TEXT_SEED = 1;

/** `count` documents of 12 words of `words`, ids `${prefix}${n}` from `start`; `n` alone decides a text. */
export function wordDocs(words: readonly string[], prefix: string, start: number, count: number): BenchDoc[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `${prefix}${start + i}`,
    text: dictionaryText(words, TEXT_SEED, start + i),
    metadata: benchMetadata(start + i),
  }));
}

/** Options of {@link wordQueries}. */
export interface WordQueryOptions {
  /** Words per query; 2 to 4 (as many as `benchQueries` has) when absent. */
  length?: number;
  seed?: number;
}

/** `count` queries of words drawn uniformly from `words`, the same for a seed. */
export function wordQueries(words: readonly string[], count: number, options: WordQueryOptions = {}): string[] {
  const next = mulberry32(options.seed ?? 99);
  const pick = () => words[Math.floor(next() * words.length)]!;
  return Array.from(
    { length: count },
    () => Array.from({ length: options.length ?? 2 + Math.floor(next() * 3) }, pick).join(" "),
  );
}
