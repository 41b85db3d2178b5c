/**
 * The layering of `src/`: each folder (and each top-level file) has a layer, and a module imports only from its own
 * folder or from lower layers; within a folder, no modules import each other around a cycle. Only `src/storage/` calls
 * Deno KV, only `src/http/` builds a `Response`, no module passes 400 lines, and `docs/architecture.md` maps every
 * folder.
 */
import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

/** Lowest first; a module may import from its own folder and from any earlier layer, never from a later one. */
const LAYERS: string[][] = [
  ["util", "concurrency", "dashboard"],
  ["fulltext", "vector_scan"],
  ["segments"],
  ["embedding", "search", "observability"],
  ["api"],
  ["client"],
  ["passages"],
  ["reranking"],
  ["config.ts"],
  ["storage"],
  ["backup", "analytics"],
  ["projects"],
  ["keys", "idempotency"],
  ["index_state"],
  ["context.ts"],
  ["writes"],
  ["reembedding", "transfer", "webhooks"],
  ["jobs"],
  ["actions"],
  ["http", "cli"],
  ["server.ts"],
  ["quire_handler.ts", "process_group.ts"],
  ["testing"],
];

function layerOf(unit: string): number {
  const layer = LAYERS.findIndex((units) => units.includes(unit));
  if (layer === -1) throw new Error(`"${unit}" has no layer: add it to LAYERS in tests/unit/layering_test.ts`);
  return layer;
}

/** The folder of a file under `src/`, or the file's own name for a top-level file. */
function unitOf(path: string): string {
  return relative(SRC, path).split("/")[0]!;
}

async function* sourceFiles(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* sourceFiles(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}

const IMPORT = /(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g;

async function sources(): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  for await (const path of sourceFiles(SRC)) texts.set(path, await Deno.readTextFile(path));
  return texts;
}

Deno.test("every import in src/ runs down the layers, never up or sideways", async () => {
  const violations: string[] = [];
  for (const [path, text] of await sources()) {
    const unit = unitOf(path);
    for (const [, specifier] of text.matchAll(IMPORT)) {
      const target = normalize(join(dirname(path), specifier!));
      if (!target.startsWith(SRC)) continue;
      const targetUnit = unitOf(target);
      if (targetUnit === unit) continue;
      if (layerOf(targetUnit) >= layerOf(unit)) {
        violations.push(`${relative(SRC, path)} imports ${relative(SRC, target)}`);
      }
    }
  }
  assert.deepEqual(violations, []);
});

/** The imports of each module of `src/` that stay inside its own folder, as paths relative to `src/`. */
async function importsWithinFolders(): Promise<Map<string, string[]>> {
  const graph = new Map<string, string[]>();
  for (const [path, text] of await sources()) {
    const targets = [...text.matchAll(IMPORT)].map(([, specifier]) => normalize(join(dirname(path), specifier!)))
      .filter((target) => dirname(target) === dirname(path));
    graph.set(relative(SRC, path), targets.map((target) => relative(SRC, target)));
  }
  return graph;
}

/**
 * Every cycle of `graph`, each once, as the modules it passes through from its first in sorted order: a walk from
 * each module goes on only through modules after it, so that it finds just the cycles it comes first in.
 */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const walk = (path: string[]): void => {
    for (const next of graph.get(path.at(-1)!) ?? []) {
      if (next === path[0]) cycles.push(path);
      else if (next > path[0]! && !path.includes(next)) walk([...path, next]);
    }
  };
  for (const start of [...graph.keys()].sort()) walk([start]);
  return cycles;
}

Deno.test("no modules of one folder import each other, directly or around a cycle", async () => {
  const cycles = cyclesOf(await importsWithinFolders()).map((cycle) => [...cycle, cycle[0]].join(" -> "));
  assert.deepEqual(cycles, []);
});

Deno.test("the cycle check sees a mutual import and a longer cycle", () => {
  const graph = new Map([["a.ts", ["b.ts"]], ["b.ts", ["a.ts", "c.ts"]], ["c.ts", ["d.ts"]], ["d.ts", ["b.ts"]]]);
  assert.deepEqual(cyclesOf(graph), [["a.ts", "b.ts"], ["b.ts", "c.ts", "d.ts"]]);
});

Deno.test("docs/architecture.md's folder map names every folder under src/", async () => {
  const map = await Deno.readTextFile(new URL("../../docs/architecture.md", import.meta.url));
  const folders: string[] = [];
  for await (const entry of Deno.readDir(SRC)) if (entry.isDirectory) folders.push(entry.name);
  assert.ok(folders.length > 10, `${folders.length} folders`);
  assert.deepEqual(folders.filter((folder) => !map.includes(`src/${folder}/`)).sort(), []);
});

/** The most lines a module of `src/` holds: more is likely more than one concern. */
const MAX_MODULE_LINES = 400;

Deno.test("no module of src/ holds more than 400 lines, but the generated kernels", async () => {
  const long = [...await sources()]
    .filter(([path]) => !path.endsWith("_wasm.ts"))
    .map(([path, text]) => [relative(SRC, path), text.split("\n").length - 1] as const)
    .filter(([, lines]) => lines > MAX_MODULE_LINES);
  assert.deepEqual(long, []);
});

Deno.test("only src/storage/ calls Deno KV", async () => {
  const call = /\bkv\.(get|getMany|set|delete|list|atomic|enqueue|listenQueue|watch|commit)\(/;
  const violations = [...await sources()]
    .filter(([path, text]) => unitOf(path) !== "storage" && call.test(text))
    .map(([path]) => relative(SRC, path));
  assert.deepEqual(violations, []);
});

/** Files outside `src/http/` that may build a `Response`: the fetch that hands transformers.js its model files. */
const TRANSPORT_EXCEPTIONS = ["embedding/transformers_runtime.ts"];

/** Above `src/http/`, the units that serve its handler: they pass requests through, and build no response. */
const SERVING_UNITS = ["http", "server.ts", "quire_handler.ts", "testing"];

Deno.test("only src/http/ and what serves it know Request and Response", async () => {
  const transport = /\bnew Response\(|\bResponse\.json\(|:\s*Request\b/;
  const violations = [...await sources()]
    .filter(([path]) => !SERVING_UNITS.includes(unitOf(path)) && !TRANSPORT_EXCEPTIONS.includes(relative(SRC, path)))
    .filter(([, text]) => transport.test(text))
    .map(([path]) => relative(SRC, path));
  assert.deepEqual(violations, []);
});

Deno.test("the layering check sees an upward import", () => {
  assert.ok(layerOf("search") < layerOf("index_state"));
  assert.ok(layerOf("writes") < layerOf("actions"));
  assert.throws(() => layerOf("nowhere"), /has no layer/);
});
