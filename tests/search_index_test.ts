/** Unit tests of the search parts: BM25 scores, vector scans, ranking, fusion, filters and tokenizing. */
import assert from "node:assert/strict";
import { TextIndex } from "../src/search/text_index.ts";
import { VectorStore } from "../src/search/vector_store.ts";
import { compareCodePoints, rankPage } from "../src/search/ranking.ts";
import { fuseScores } from "../src/search/hybrid_fusion.ts";
import { parseFilter } from "../src/search/metadata_filter.ts";
import { tokenize } from "../src/search/tokenize.ts";

/** A deterministic pseudo-random generator, so that failures reproduce. */
function random(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
}

function textOf(i: number): string {
  return Array.from({ length: 3 + (i * 7) % 13 }, (_, j) => `w${(i * 31 + j * 17) % 300}`).join(" ");
}

Deno.test("BM25 scores do not depend on the order of inserts and removals", () => {
  const forward = new TextIndex();
  const backward = new TextIndex();
  const direct = new TextIndex();
  for (let i = 0; i < 3000; i++) forward.set(`d${i}`, textOf(i));
  for (let i = 2999; i >= 0; i--) backward.set(`d${i}`, textOf(i));
  for (let i = 0; i < 3000; i += 3) {
    forward.remove(`d${i}`);
    backward.remove(`d${i}`);
  }
  for (let i = 0; i < 3000; i++) if (i % 3 !== 0) direct.set(`d${i}`, textOf(i));
  const query = "w1 w5 w77 w200";
  const expected = direct.scores(query);
  assert.ok(expected.size > 100);
  assert.deepEqual(forward.scores(query), expected);
  assert.deepEqual(backward.scores(query), expected);
});

Deno.test("full-text scores are Okapi BM25 with raw term counts and lengths", () => {
  const index = new TextIndex();
  index.set("a", "apple apple apple pie");
  index.set("b", "apple pie with cream");
  index.set("c", "cherry");
  const bm25 = (tf: number, length: number, holders: number) => {
    const idf = Math.log(1 + (3 - holders + 0.5) / (holders + 0.5));
    return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / 3));
  };
  const scores = index.scores("Apple cherry apple");
  assert.deepEqual([...scores.keys()].sort(), ["a", "b", "c"]);
  assert.ok(Math.abs(scores.get("a")! - bm25(3, 4, 2)) < 1e-12);
  assert.ok(Math.abs(scores.get("b")! - bm25(1, 4, 2)) < 1e-12);
  assert.ok(Math.abs(scores.get("c")! - bm25(1, 1, 1)) < 1e-12);
  assert.ok(scores.get("a")! > scores.get("b")!, "a repeated term counts");
  assert.equal(index.scores("appl").size, 0, "no prefix matches");
  assert.equal(index.scores("apples").size, 0);
});

Deno.test("re-indexing a text replaces its terms", () => {
  const index = new TextIndex();
  index.set("a", "red apple");
  index.set("a", "green pear");
  assert.equal(index.scores("apple").size, 0);
  assert.deepEqual([...index.scores("pear").keys()], ["a"]);
  index.remove("a");
  index.remove("a");
  assert.equal(index.scores("pear").size, 0);
});

Deno.test("the vector store scores exact cosines and keeps them right after removals", () => {
  const store = new VectorStore();
  const next = random(7);
  const vectors = new Map<string, Float32Array>();
  for (let i = 0; i < 100; i++) {
    const vector = Float32Array.from({ length: 8 }, () => next() - 0.5);
    vectors.set(`v${i}`, vector);
    store.set(`v${i}`, vector);
  }
  for (let i = 0; i < 100; i += 2) {
    store.remove(`v${i}`);
    vectors.delete(`v${i}`);
  }
  vectors.get("v1")!.fill(9); // The store holds its own copy.
  const query = Float32Array.from({ length: 8 }, () => next() - 0.5);
  const { ids, scores } = store.similarities(query, (id) => id !== "v3");
  assert.equal(store.size, 50);
  assert.equal(ids.length, 49);
  assert.ok(!ids.includes("v3"));
  const selfScore = store.similarities(query).scores;
  assert.equal(selfScore.length, 50);
  ids.forEach((id, i) => {
    if (id === "v1") return;
    const vector = vectors.get(id)!;
    let dot = 0, a = 0, b = 0;
    for (let k = 0; k < 8; k++) {
      dot += query[k]! * vector[k]!;
      a += query[k]! * query[k]!;
      b += vector[k]! * vector[k]!;
    }
    assert.ok(Math.abs(scores[i]! - dot / Math.sqrt(a * b)) < 1e-12, id);
  });
  assert.throws(() => store.set("bad", new Float32Array(3)), /3 dimensions; this index holds 8/);
  assert.throws(() => store.similarities(new Float32Array(4)), RangeError);
});

Deno.test("rankPage returns the same pages as a full sort, ties broken by id", () => {
  const next = random(3);
  const ids = Array.from({ length: 500 }, (_, i) => `id${(i * 7919) % 500}`);
  const scores = ids.map(() => Math.round(next() * 20) / 20);
  const sorted = ids.map((id, i) => ({ id, score: scores[i]! }))
    .sort((a, b) => b.score - a.score || compareCodePoints(a.id, b.id));
  for (const [offset, limit] of [[0, 10], [5, 7], [490, 100], [0, 500], [600, 10]] as const) {
    assert.deepEqual(rankPage(ids, scores, offset, limit), sorted.slice(offset, offset + limit), `${offset}+${limit}`);
  }
});

Deno.test("ids compare by code point, as Deno KV orders keys", () => {
  const ids = ["\u{1F600}", "\uFF01", "b", "a", "ab", ""];
  assert.deepEqual([...ids].sort(compareCodePoints), ["", "a", "ab", "b", "\uFF01", "\u{1F600}"]);
});

Deno.test("hybrid fusion is an even sum of max-scaled BM25 and min-max-scaled cosine", () => {
  assert.deepEqual(fuseScores([0.2, 0.6, 1], [0, 2, 4]), [0, 0.5 * 0.5 + 0.5 * 0.5, 1]);
  assert.deepEqual(fuseScores([0.3, 0.3], [0, 0]), [0.5, 0.5], "equal cosines all count as best");
});

Deno.test("filters read own metadata keys only, never the prototype", () => {
  const filter = parseFilter({ constructor: { $exists: true } });
  assert.equal(filter({}), false);
  assert.equal(filter(JSON.parse('{"constructor": 1}')), true);
  assert.equal(parseFilter(JSON.parse('{"__proto__": 1}'))(JSON.parse('{"__proto__": 1}')), true);
  assert.equal(parseFilter({ "a.b": 1 })({ "a.b": 1 }), true, "a literal dotted key wins");
  assert.equal(parseFilter({ "a.b": 1 })({ a: { b: 1 } }), true);
  assert.equal(parseFilter({ x: { $exists: false } })(undefined), true);
});

Deno.test("tokenize lower-cases, strips diacritics and splits any script", () => {
  assert.deepEqual(tokenize("Über-Café, café! naïve 東京 Привет_мир 42"), [
    "uber",
    "cafe",
    "cafe",
    "naive",
    "東京",
    "привет",
    "мир",
    "42",
  ]);
  assert.deepEqual(tokenize("  ...  "), []);
  assert.deepEqual(tokenize("ﬁle x² Ⅻ"), ["file", "x2", "xii"], "compatibility characters fold");
  assert.deepEqual(tokenize("काम कम"), ["काम", "कम"], "vowel signs of other scripts stay");
  assert.deepEqual(tokenize("한국어 Ελληνικά"), ["한국어", "ελληνικα"]);
});
