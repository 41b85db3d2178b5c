/**
 * `deno task bench:first-answer`: how soon a started server answers over an index it must load (issue 53's target 1).
 * For each checkout (this one, and with `--before <dir>` another, e.g. a git worktree of an earlier commit), a server
 * over a fresh store loads `--docs` documents (100,000 by default: 12 `wamerican` words and a near-random 384-d client
 * vector each) in sequential `addDocs` of 1,000 and settles. Then, `--rounds` times (3), each checkout's server starts
 * again over its store, in turn, and the time from the spawn to the answer of its first vector search is printed with
 * the server's own time for that search (its request log's `ms`: the load and the search, steadier than the time from
 * the spawn) and the RSS after it; this checkout's server also starts with `SEGMENT_DIR=off`, which reads the snapshot
 * from the store.
 */
import { parseArgs } from "node:util";
import { line, ok, rssMiB } from "./_bench_helpers.ts";
import { dictionaryWords } from "./_corpus.ts";
import {
  clientVectorEnvironment,
  loadDictionaryIndex,
  settle,
  startClientVectorServer,
  vectorOf,
} from "./_client_vectors.ts";

const args = parseArgs({
  args: Deno.args,
  options: {
    docs: { type: "string", default: "100000" },
    rounds: { type: "string", default: "3" },
    before: { type: "string" },
  },
});
const DOCS = Number(args.values.docs);
const here = new URL("../..", import.meta.url).pathname;
const words = await dictionaryWords();

interface Store {
  name: string;
  root: string;
  env: Record<string, string>;
  key: string;
}

const stores: Store[] = [];
for (
  const [name, root] of args.values.before === undefined
    ? [["after", here]]
    : [["before", args.values.before], ["after", here]]
) {
  const env = await clientVectorEnvironment();
  await using server = await startClientVectorServer(root!, env);
  const started = performance.now();
  await loadDictionaryIndex(server, "dict", DOCS, words);
  const loaded = (performance.now() - started) / 1000;
  line(name!, `${DOCS} documents loaded in ${loaded.toFixed(1)} s, settled in ${(await settle(server)).toFixed(0)} s`);
  stores.push({ name: name!, root: root!, env, key: server.key });
}

const runs = [...stores, {
  ...stores.at(-1)!,
  name: "after, SEGMENT_DIR=off",
  env: { ...stores.at(-1)!.env, SEGMENT_DIR: "off" },
}];
for (let round = 0; round < Number(args.values.rounds); round++) {
  for (const run of runs) {
    const started = performance.now();
    let log = "";
    await using server = await startClientVectorServer(run.root, run.env, run.key, (text) => log += text);
    await ok(server, {
      action: "search",
      indexName: "dict",
      mode: "vector",
      vector: vectorOf("near-random", 40_000_000 + round),
    });
    const first = performance.now() - started;
    const rss = await rssMiB(server.pid);
    // The request log line is written as the answer goes out: it may trail the answer by a moment.
    for (let waited = 0; !/"action":"search"/.test(log) && waited < 1_000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const serverMs = Number(log.match(/"action":"search"[^\n]*"ms":([\d.]+)/)?.[1] ?? NaN);
    line(
      run.name,
      `first answer ${first.toFixed(0)} ms from the spawn (${serverMs.toFixed(0)} ms in the server), RSS ${
        rss.toFixed(0)
      } MiB`,
    );
  }
}
