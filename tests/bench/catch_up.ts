/**
 * Two instances over one KV file: the first search on B after a 10-doc write on A, against B's warm search, at 1k and
 * 10k docs (the generated test model; `--docs N` for another size). Run: deno run -A tests/bench/catch_up.ts
 */
import { startTestServer } from "../_helpers.ts";

const sizes = Deno.args.includes("--docs") ? [Number(Deno.args[Deno.args.indexOf("--docs") + 1])] : [1_000, 10_000];
const ROUNDS = 20;
const words = ["river", "storm", "forest", "music", "apple", "train", "science", "lantern", "meadow", "copper"];
const text = (i: number) => Array.from({ length: 12 }, (_, j) => words[(i * 7 + j * 3) % words.length]).join(" ");

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

for (const size of sizes) {
  const a = await startTestServer();
  const b = await startTestServer({ kvPath: a.kvPath, key: a.key });
  await a.ok({ action: "createIndex", indexName: "bench", docs: [] });
  for (let first = 0; first < size; first += 2_000) {
    const docs = Array.from(
      { length: Math.min(2_000, size - first) },
      (_, i) => ({ id: `d${first + i}`, text: text(first + i) }),
    );
    await a.ok({ action: "addDocs", indexName: "bench", docs });
  }
  const search = async () => {
    const started = performance.now();
    await b.ok({ action: "search", indexName: "bench", query: "river storm lantern", mode: "hybrid" });
    return performance.now() - started;
  };
  await search();
  const warm: number[] = [];
  const first: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < 5; i++) warm.push(await search());
    const docs = Array.from({ length: 10 }, (_, i) => ({ id: `w${round}-${i}`, text: text(round * 10 + i) }));
    await a.ok({ action: "addDocs", indexName: "bench", docs });
    first.push(await search());
  }
  const loads = Object.fromEntries(b.service.context.metrics.loads());
  console.log(
    `catch-up at ${size} docs: first search on B after a 10-doc write on A, median ${median(first).toFixed(2)} ms; ` +
      `B warm median ${median(warm).toFixed(2)} ms: ${(median(first) / median(warm)).toFixed(2)}× ` +
      `(loads on B: ${JSON.stringify(loads)})`,
  );
  await b.close();
  await a.close();
}
