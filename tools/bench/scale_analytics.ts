/**
 * What recording search analytics costs a search: two server processes over the scale benchmark's store, one started
 * by default (recording) and one with `ANALYTICS=false`, both warmed and settled, then rounds that alternate between
 * them (on, off, on, off…), each round {@link CLIENTS} concurrent clients sending the same full-text searches to the one
 * process; the p50 of the latencies the clients see on each, and their ratio. Two processes of the same configuration
 * differ by up to about 10% on a 2-core machine, so the same rounds follow in the recording process alone, alternating
 * searches that are recorded with searches that say `analytics: false`: a ratio without the processes' difference.
 */
import { startServerProcess } from "../../tests/_server_process.ts";
import { settle } from "./_client_vectors.ts";
import { quantile } from "./_corpus.ts";
import { CLIENTS, searchLatencies } from "./scale_fulltext.ts";

/** What {@link measureAnalyticsCost} runs on. */
export interface AnalyticsBenchOptions {
  /** The environment of the benchmark's server, without `ANALYTICS`. */
  env: Record<string, string>;
  /** The project's key. */
  key: string;
  indexName: string;
  /** The queries of one round; every round sends them all. */
  queries: string[];
  rounds: number;
}

/** Runs the rounds and returns the figure's text. */
export async function measureAnalyticsCost(options: AnalyticsBenchOptions): Promise<string> {
  const { indexName, queries } = options;
  const [on, off] = await Promise.all([
    startServerProcess(options.env, options.key),
    startServerProcess({ ...options.env, ANALYTICS: "false" }, options.key),
  ]);
  try {
    const fulltext = { mode: "fulltext" };
    // Warm-up: each process loads the index at its first search, and a round warms its code paths. Then both wait
    // until neither works in the background (replaying the log into the graph, or writing a snapshot).
    for (const server of [on, off]) await searchLatencies(server, indexName, queries, fulltext);
    const waited = Math.max(...await Promise.all([settle(on), settle(off)]));
    const [recorded, unrecorded] = await alternate(
      options.rounds,
      () => searchLatencies(on, indexName, queries, fulltext),
      () => searchLatencies(off, indexName, queries, fulltext),
    );
    const [inTurns, optedOut] = await alternate(
      options.rounds,
      () => searchLatencies(on, indexName, queries, fulltext),
      () => searchLatencies(on, indexName, queries, { ...fulltext, analytics: false }),
    );
    const ms = (samples: number[]) => `${quantile(samples, 0.5).toFixed(2)} ms`;
    const ratio = (a: number[], b: number[]) => `${(quantile(a, 0.5) / quantile(b, 0.5)).toFixed(3)}×`;
    return `${options.rounds} rounds each of ${queries.length} full-text searches, ${CLIENTS} clients, after ` +
      `${waited.toFixed(0)} s to settle: p50 ${ms(recorded)} recording (default), ${ms(unrecorded)} with ` +
      `ANALYTICS=false: ${ratio(recorded, unrecorded)} (target ≤ 1.05×); in the recording process, recorded ` +
      `${ms(inTurns)}, with analytics: false ${ms(optedOut)}: ${ratio(inTurns, optedOut)}`;
  } finally {
    await Promise.all([on.stop(), off.stop()]);
  }
}

/** Runs `rounds` rounds of `a` and of `b` in turns; the latencies of each. */
async function alternate(
  rounds: number,
  a: () => Promise<number[]>,
  b: () => Promise<number[]>,
): Promise<[number[], number[]]> {
  const latencies: [number[], number[]] = [[], []];
  for (let round = 0; round < rounds; round++) {
    latencies[0].push(...await a());
    latencies[1].push(...await b());
  }
  return latencies;
}
