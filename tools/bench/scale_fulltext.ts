/**
 * The scale benchmark's search latencies on one index, from {@link CLIENTS} concurrent clients over HTTP: each mode with
 * sets of queries (of 2, 5 and 12 words, say), and full-text as people expect it (typos and prefixes, facets, sort by
 * year) against exact matching, the variants in alternating rounds so that the machine's drift hits them alike.
 */
import type { ServerProcess } from "../../tests/_server_process.ts";
import { ok, timed } from "./_bench_helpers.ts";
import { ms, quantile } from "./_corpus.ts";

/** How many clients send the scale benchmark's searches at once. */
export const CLIENTS = 8;

/** Latencies of `queries` searched on `indexName` by {@link CLIENTS} concurrent clients, with `body`'s fields. */
export async function searchLatencies(
  target: ServerProcess,
  indexName: string,
  queries: string[],
  body: Record<string, unknown>,
): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (next < queries.length) {
      const query = queries[next++]!;
      latencies.push(await timed(() => ok(target, { action: "search", indexName, query, ...body })));
    }
  }));
  return latencies;
}

/** The p50 and p99 of searches of `mode` on `indexName`, for each named set of queries (all of one size). */
export async function modeLatencies(
  server: ServerProcess,
  indexName: string,
  mode: "vector" | "hybrid" | "fulltext",
  sets: Record<string, string[]>,
): Promise<string> {
  const parts: string[] = [];
  for (const [name, queries] of Object.entries(sets)) {
    const latencies = await searchLatencies(server, indexName, queries, { mode });
    parts.push(`${name}: p50 ${ms(quantile(latencies, 0.5))}, p99 ${ms(quantile(latencies, 0.99))}`);
  }
  const size = Object.values(sets)[0]!.length;
  return parts.length === 1
    ? `${CLIENTS} clients, ${size} queries of ${parts[0]}`
    : `${CLIENTS} clients, ${size} queries a set, ${parts.join("; ")}`;
}

/** How much more `value` is than `base`, in percent. */
function pct(value: number, base: number): string {
  return `${((value / base - 1) * 100).toFixed(0)}%`;
}

/** Full-text by default (typos and prefixes), with facets and with a sort, against exact matching, on `queries`. */
export async function fulltextVariants(server: ServerProcess, indexName: string, queries: string[]): Promise<string> {
  const variants: Record<string, Record<string, unknown>> = {
    exact: { typoTolerance: false, prefix: false },
    "typo+prefix": {},
    "+ facets": { facets: ["category", "year"] },
    "+ sort": { sort: [{ field: "year", order: "desc" }] },
  };
  const latencies = new Map(Object.keys(variants).map((name) => [name, [] as number[]]));
  const rounds = 4;
  for (let round = 0; round < rounds; round++) {
    const slice = queries.slice(round * (queries.length / rounds), (round + 1) * (queries.length / rounds));
    for (const [name, extra] of Object.entries(variants)) {
      latencies.get(name)!.push(...await searchLatencies(server, indexName, slice, { mode: "fulltext", ...extra }));
    }
  }
  const p50 = (name: string) => quantile(latencies.get(name)!, 0.5);
  return `${CLIENTS} clients, ${queries.length} queries each: exact p50 ${ms(p50("exact"))}; typo+prefix ` +
    `${ms(p50("typo+prefix"))} (${(p50("typo+prefix") / p50("exact")).toFixed(2)}×, target ≤ 2×); + facets ` +
    `${ms(p50("+ facets"))} (+${pct(p50("+ facets"), p50("typo+prefix"))}, target ≤ 30%); + sort by year ` +
    `${ms(p50("+ sort"))} (+${pct(p50("+ sort"), p50("typo+prefix"))}, target ≤ 30%)`;
}
