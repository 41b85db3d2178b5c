/**
 * Issue 18's costs of the test harness (`@quire/server/testing`), in this process: the start of an instance, `reset()`
 * with 10 indexes, and a `createIndex` of 100 documents followed by a search, each as a p50 over several rounds.
 */
import { startQuire } from "../../src/testing/start_quire.ts";
import { benchDocs, ms, quantile } from "./_corpus.ts";
import { line, timed } from "./_bench_helpers.ts";

const ROUNDS = 20;

/** Returns the figure lines: start, reset, and create + search. */
export async function measureTestingHarness(): Promise<[string, string][]> {
  const starts: number[] = [];
  const resets: number[] = [];
  const writes: number[] = [];
  const docs = benchDocs("faq", 0, 100);
  // One instance started and closed first, so that the rounds measure a warm process, as every test but a suite's
  // first sees it.
  await (await startQuire()).close();
  for (let round = 0; round < ROUNDS; round++) {
    let quire!: Awaited<ReturnType<typeof startQuire>>;
    starts.push(await timed(async () => quire = await startQuire()));
    try {
      writes.push(
        await timed(async () => {
          await quire.client.createIndex("faq", docs);
          await quire.client.search("faq", docs[round]!.text.split(" ").slice(0, 3).join(" "));
        }),
      );
      for (let i = 0; i < 10; i++) await quire.client.createIndex(`index-${i}`, docs.slice(0, 10));
      resets.push(await timed(() => quire.reset()));
    } finally {
      await quire.close();
    }
  }
  return [
    [
      "18. harness start",
      `startQuire p50 ${ms(quantile(starts, 0.5))}, p90 ${ms(quantile(starts, 0.9))} (target ≤ 150 ms)`,
    ],
    ["18. harness reset", `reset() with 10 indexes p50 ${ms(quantile(resets, 0.5))} (target ≤ 20 ms)`],
    [
      "18. harness write",
      `createIndex of 100 docs + search p50 ${ms(quantile(writes, 0.5))}, p90 ${ms(quantile(writes, 0.9))} ` +
      `(target ≤ 50 ms)`,
    ],
  ];
}

if (import.meta.main) {
  for (const [target, text] of await measureTestingHarness()) line(target, text);
}
