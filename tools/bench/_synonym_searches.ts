/**
 * What synonyms cost a search, as `bench:synonyms` and `deno task bench` measure it: 1,000 synonym entries of random
 * words (500 groups of two words, 500 one-way entries to a word and a two-word phrase), and searches of random words
 * sent to an index without settings and to one with the same documents and the synonyms, one right after the other
 * (which goes first alternates), so that drift and background work hit both alike; the server's `tookMs` p50 of each.
 * The queries are random words (of which about 3% have a synonym), and again with their first word replaced by one that
 * has a synonym, so that every query is expanded: full-text with typos and prefixes (the default), exact, and hybrid.
 */
import type { ServerProcess } from "../../tests/_server_process.ts";
import { mulberry32 } from "../../src/util/seeded_random.ts";
import { ok } from "./_bench_helpers.ts";
import { vectorOf } from "./_client_vectors.ts";
import { quantile } from "./_corpus.ts";

/** A search's fields besides the action and the index. */
type Search = Record<string, unknown>;

/** The synonym entries, and the searches of each case; each case is followed by its twin with every query expanded. */
export interface SynonymWorkload {
  synonyms: ({ words: string[] } | { from: string; to: string[] })[];
  cases: { name: string; searches: Search[] }[];
}

/** Options of {@link synonymWorkload}. */
export interface SynonymWorkloadOptions {
  /** Synonym entries, half groups and half one-way. */
  entries: number;
  /** Searches per case. */
  queries: number;
  /** The dimensions of the hybrid searches' near-random client vectors: those of the indexes' model. */
  dims: number;
}

/** `entries` synonym entries of `words`, and `queries` searches per case, the same in every run. */
export function synonymWorkload(
  words: readonly string[],
  { entries, queries, dims }: SynonymWorkloadOptions,
): SynonymWorkload {
  const next = mulberry32(11);
  const pick = () => words[Math.floor(next() * words.length)]!;
  const groups = Array.from({ length: entries / 2 }, () => ({ words: [pick(), pick()] }));
  const oneWay = Array.from({ length: entries / 2 }, () => ({ from: pick(), to: [pick(), `${pick()} ${pick()}`] }));
  const sources = [...groups.flatMap((group) => group.words), ...oneWay.map((entry) => entry.from)];
  const cases: SynonymWorkload["cases"] = [];
  for (const count of [2, 5, 12]) {
    const texts = Array.from({ length: queries }, () => Array.from({ length: count }, pick).join(" "));
    const expanded = texts.map((query) =>
      [sources[Math.floor(next() * sources.length)], ...query.split(" ").slice(1)].join(" ")
    );
    cases.push({ name: `fulltext ${count} words`, searches: texts.map((query) => ({ mode: "fulltext", query })) });
    cases.push({ name: `  each with a synonym`, searches: expanded.map((query) => ({ mode: "fulltext", query })) });
    if (count === 5) {
      const exact = { mode: "fulltext", typoTolerance: false, prefix: false };
      cases.push({ name: "fulltext exact 5 words", searches: texts.map((query) => ({ ...exact, query })) });
      cases.push({ name: "  each with a synonym", searches: expanded.map((query) => ({ ...exact, query })) });
      const hybrid = (query: string, i: number) => ({
        mode: "hybrid",
        query,
        vector: vectorOf("near-random", 7e6 + i, dims),
      });
      cases.push({ name: "hybrid 5 words", searches: texts.map(hybrid) });
      cases.push({ name: "  each with a synonym", searches: expanded.map(hybrid) });
    }
  }
  return { synonyms: [...groups, ...oneWay], cases };
}

/** The `tookMs` p50 of a case on the index without synonyms and on the one with them. */
export interface SynonymCost {
  name: string;
  without: number;
  with: number;
}

/** Where {@link measureSynonymCost} sends the searches, and how often. */
export interface SynonymIndexes {
  /** The index without settings. */
  without: string;
  /** The index with the same documents and the workload's synonyms. */
  with: string;
  rounds: number;
}

/** Sends every case's searches to both indexes in turns, `rounds` times after a warm-up; the p50 of each case. */
export async function measureSynonymCost(
  server: ServerProcess,
  workload: SynonymWorkload,
  indexes: SynonymIndexes,
): Promise<SynonymCost[]> {
  const tookMs = async (search: Search, indexName: string) =>
    (await ok<{ tookMs: number }>(server, { action: "search", ...search, indexName })).tookMs;
  const paired = async (searches: Search[], without: number[], withSynonyms: number[]) => {
    for (const [i, search] of searches.entries()) {
      if (i % 2 === 0) {
        without.push(await tookMs(search, indexes.without));
        withSynonyms.push(await tookMs(search, indexes.with));
      } else {
        withSynonyms.push(await tookMs(search, indexes.with));
        without.push(await tookMs(search, indexes.without));
      }
    }
  };
  // Warm-up: compiles the settings once, and the server's code paths.
  for (const { searches } of workload.cases) await paired(searches.slice(0, 20), [], []);
  const without = workload.cases.map(() => [] as number[]);
  const withSynonyms = workload.cases.map(() => [] as number[]);
  for (let round = 0; round < indexes.rounds; round++) {
    for (const [i, { searches }] of workload.cases.entries()) await paired(searches, without[i]!, withSynonyms[i]!);
  }
  return workload.cases.map(({ name }, i) => ({
    name,
    without: quantile(without[i]!, 0.5),
    with: quantile(withSynonyms[i]!, 0.5),
  }));
}
