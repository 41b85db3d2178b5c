/**
 * Unit tests of full-text search as people expect it: folding and stemming per language, stop words, typo and prefix
 * matches found by walking the term tree, exact matches ranked above typos, highlights, snippets, facets and sort,
 * all of which survive a snapshot.
 */
import assert from "node:assert/strict";
import { analyzerFor } from "../../src/fulltext/analyzer.ts";
import { LANGUAGES } from "../../src/fulltext/languages.ts";
import { highlightRanges, snippetOf, textWords } from "../../src/fulltext/highlights.ts";
import { wordsWithin, wordsWithPrefix } from "../../src/fulltext/word_walks.ts";
import { SortedWords } from "../../src/fulltext/sorted_words.ts";
import { TextIndex } from "../../src/search/text_index.ts";
import type { MatchOptions } from "../../src/search/text_query.ts";
import { SearchIndex } from "../../src/search/search_index.ts";
import type { SearchQuery } from "../../src/search/search_query.ts";
import { decodeSearchSnapshot } from "../../src/search/search_snapshot_codec.ts";
import { snapshotBytes, textScores } from "../_helpers.ts";
import type { StoredDoc } from "../../src/storage/doc_change_codec.ts";

const FUZZY: MatchOptions = { typoTolerance: true, prefix: true };
const EXACT: MatchOptions = { typoTolerance: false, prefix: false };

function doc(text: string, metadata?: Record<string, unknown>): StoredDoc {
  const vector = Float32Array.from({ length: 4 }, (_, i) => Math.cos(text.length + i));
  const stored: StoredDoc = { text, passages: [{ start: 0, end: text.length, vector }] };
  return metadata === undefined ? stored : { ...stored, metadata };
}

function indexOf(docs: Record<string, string | [string, Record<string, unknown>]>, language?: string): SearchIndex {
  const index = new SearchIndex({ revision: 1, language });
  index.apply(
    Object.entries(docs).map(([id, value]) => ({
      id,
      doc: typeof value === "string" ? doc(value) : doc(value[0], value[1]),
    })),
  );
  return index;
}

function ids(index: SearchIndex, text: string, extra: Partial<SearchQuery> = {}): string[] {
  return index.search({ mode: "fulltext", text, match: FUZZY, offset: 0, limit: 100, ...extra }).hits.map((hit) =>
    hit.id
  );
}

Deno.test("words fold case, diacritics and compatibility forms in any script, with their offsets", () => {
  const english = analyzerFor("english");
  const surfaces = (text: string) => english.words(text).map((word) => word.surface);
  assert.deepEqual(surfaces("Über-Café, café! naïve 東京 Привет_мир 42"), [
    "uber",
    "cafe",
    "cafe",
    "naive",
    "東京",
    "привет",
    "мир",
    "42",
  ]);
  assert.deepEqual(surfaces("  ...  "), []);
  assert.deepEqual(surfaces("ﬁle x² Ⅻ"), ["file", "x2", "xii"], "compatibility characters fold");
  assert.deepEqual(surfaces("काम कम"), ["काम", "कम"], "vowel signs of other scripts stay");
  const text = "Le Café, d'été";
  for (const word of english.words(text)) assert.equal(text.slice(word.start, word.end).length > 0, true);
  assert.deepEqual(english.words(text).map(({ start, end }) => text.slice(start, end)), ["Le", "Café", "d", "été"]);
});

Deno.test("each language stems its own words, and folds before it stems", () => {
  const english = analyzerFor("english");
  assert.equal(english.stem("running"), english.stem("runs"));
  assert.equal(english.stem("passwords"), english.stem("password"));
  const german = analyzerFor("german");
  assert.deepEqual(german.terms("Läufer"), german.terms("laufer"));
  assert.deepEqual(german.terms("Häuser"), german.terms("hauser"));
  assert.throws(() => analyzerFor("klingon"), /Unknown language/);
  assert.ok(LANGUAGES.includes("english") && LANGUAGES.includes("german") && LANGUAGES.length >= 25);
});

Deno.test("queries drop stop words, unless they are all the query has", () => {
  const english = analyzerFor("english");
  assert.deepEqual(english.queryWords("reset my password"), ["reset", "password"]);
  assert.deepEqual(english.queryWords("to be or not to be"), ["to", "be", "or", "not", "to", "be"]);
  const index = indexOf({ a: "to be or not to be", b: "the question is whether" });
  assert.deepEqual(ids(index, "to be"), ["a"]);
  assert.deepEqual(ids(index, "the question"), ["b"]);
});

Deno.test("the walks find words within the typos allowed and words that start with a prefix", () => {
  const tree = SortedWords.from(["password", "passport", "pass", "lantern", "lane", "the", "teh", "tent"]);
  const near = (word: string, edits: number) =>
    wordsWithin(tree, word, edits).map((found) => `${found.word}:${found.edits}`).sort();
  assert.deepEqual(near("pasword", 1), ["password:1"]);
  assert.deepEqual(near("passwrod", 1), ["password:1"], "a swap of neighbours is one typo");
  assert.deepEqual(near("passwort", 1), ["passport:1", "password:1"]);
  assert.deepEqual(near("the", 0), ["the:0"]);
  assert.deepEqual(near("tha", 1), ["the:1"]);
  assert.deepEqual(wordsWithPrefix(tree, "pass", 10).sort(), ["passport", "password"]);
  assert.deepEqual(wordsWithPrefix(tree, "lant", 10), ["lantern"]);
  assert.deepEqual(wordsWithPrefix(tree, "x", 10), []);
  assert.equal(wordsWithPrefix(tree, "", 3).length, 3, "the limit holds");
});

Deno.test("typos follow Meilisearch's lengths: 1 from 5 characters, 2 from 9, none below", () => {
  const index = indexOf({
    pw: "forgot the password again",
    cat: "a small cat",
    env: "the environment variable",
  });
  assert.deepEqual(ids(index, "pasword"), ["pw"], "7 characters, one typo");
  assert.deepEqual(ids(index, "cta"), [], "3 characters match exactly only");
  assert.deepEqual(ids(index, "enviornmnt"), ["env"], "10 characters, two typos");
  assert.deepEqual(ids(index, "pasword", { match: { typoTolerance: false, prefix: true } }), []);
  assert.deepEqual(ids(index, "paswrd"), [], "two typos in 6 characters are too many");
});

Deno.test("the last query word matches as a prefix, below an exact match, and not when turned off", () => {
  const index = indexOf({
    pw: "reset your password here",
    lantern: "a lantern in the dark",
    passw: "passw is not a word but it is here",
  });
  assert.deepEqual(ids(index, "reset my passw"), ["pw", "passw"], "both words beat one");
  const hits = index.search({ mode: "fulltext", text: "passw", match: FUZZY, offset: 0, limit: 10 }).hits;
  assert.equal(hits[0]!.id, "passw", "the exact match ranks first");
  assert.deepEqual(ids(index, "lant"), ["lantern"]);
  assert.deepEqual(ids(index, "lant", { match: { typoTolerance: true, prefix: false } }), []);
  assert.deepEqual(ids(index, "lant dark", { match: FUZZY }), ["lantern"], "only the last word is a prefix");
});

Deno.test("an exact match ranks above a typo match of the same BM25 weight, and one typo above two", () => {
  // The same length and the same single term each, so that only the kind of match differs.
  const index = indexOf({ exact: "house", one: "horse", two: "hors" });
  const hits = index.search({ mode: "fulltext", text: "house", match: FUZZY, offset: 0, limit: 10 }).hits;
  assert.deepEqual(hits.map((hit) => hit.id), ["exact", "one"]);
  const long = indexOf({ exact: "abcdefghij", one: "abcdefghiX", two: "abcdefgXYj" });
  assert.deepEqual(ids(long, "abcdefghij", { match: { typoTolerance: true, prefix: false } }), ["exact", "one", "two"]);
  const scores = long.search({ mode: "fulltext", text: "abcdefghij", match: FUZZY, offset: 0, limit: 3 }).hits
    .map((hit) => hit.score);
  assert.ok(scores[0]! > scores[1]! && scores[1]! > scores[2]!);
  const texts = new TextIndex();
  texts.add(0, "mansions");
  texts.add(1, "mansion");
  const stemmed = textScores(texts, texts.query("mansion", EXACT));
  assert.equal(stemmed.slots.length, 2);
  assert.equal(stemmed.scores[0], stemmed.scores[1], "a stemmed match is an exact one, not a typo");
});

Deno.test("the full-text memory estimate follows the vocabulary: each distinct term costs, and a removal gives it back", () => {
  // Words of consonants but s, which the English stemmer leaves as they are: distinct by construction, one twice.
  const unique = (i: number) => `zq${i.toString(19).replace(/./g, (c) => "bcdfghjklmnpqrtvwxz"[parseInt(c, 19)]!)}`;
  const shared = new TextIndex();
  const distinct = new TextIndex();
  for (let slot = 0; slot < 2_000; slot++) {
    shared.add(slot, "storm river storm forest river");
    distinct.add(slot, `${unique(2 * slot)} ${unique(2 * slot + 1)} ${unique(2 * slot)}`);
  }
  assert.equal(distinct.terms().length, 4_000);
  // A distinct term holds a map entry, a string and a place in the sorted set, and a repeat a map of its own: tens to
  // hundreds of bytes, where a posting in a shared list is a few.
  assert.ok(distinct.bytes > 3 * shared.bytes, `distinct ${distinct.bytes} bytes, shared ${shared.bytes}`);
  assert.ok(distinct.bytes / 4_000 > 80, `${distinct.bytes / 4_000} bytes a term`);
  const full = distinct.bytes;
  for (let slot = 1_000; slot < 2_000; slot++) {
    distinct.remove(slot, `${unique(2 * slot)} ${unique(2 * slot + 1)} ${unique(2 * slot)}`);
  }
  assert.equal(distinct.terms().length, 2_000);
  const arrays = 2_000 * (4 + 8 + 8 + 4 + 4 + 8);
  assert.ok(Math.abs(distinct.bytes - full / 2) < arrays, `${distinct.bytes} bytes after half was removed, of ${full}`);
});

Deno.test("highlights give every matched word, typos and prefixes included; snippets cut around the best", () => {
  const text = "Reset your Passwords, then log in: the passwrd field takes any password.";
  const index = indexOf({ a: text });
  const english = index.analyzer;
  const terms = index.textQuery("reset password", FUZZY).terms;
  const words = highlightRanges(textWords(text, english), terms).map(({ start, end }) => text.slice(start, end));
  assert.deepEqual(words, ["Reset", "Passwords", "passwrd", "password"]);
  const long = [...Array(40).keys()].map((i) => `filler${i}`).join(" ") + " the lantern shines " +
    [...Array(40).keys()].map((i) => `after${i}`).join(" ");
  const lanternIndex = indexOf({ l: long });
  const snippet = snippetOf(long, textWords(long, english), lanternIndex.textQuery("lant", FUZZY).terms);
  assert.ok(snippet.text.startsWith("…") && snippet.text.endsWith("…"), snippet.text);
  assert.equal(snippet.text.split(" ").length, 20);
  assert.deepEqual(snippet.highlights.map(({ start, end }) => snippet.text.slice(start, end)), ["lantern"]);
  const short = snippetOf("a lantern", textWords("a lantern", english), lanternIndex.textQuery("lantern", FUZZY).terms);
  assert.deepEqual(short, { text: "a lantern", highlights: [{ start: 2, end: 9 }] });
  const none = snippetOf(long, textWords(long, english), new Set());
  assert.ok(none.text.startsWith("filler0 ") && none.text.endsWith("…") && none.highlights.length === 0);
});

Deno.test("facets count every match by value, arrays by element, capped, in count then value order", () => {
  const index = indexOf({
    a: ["red apple", { color: "red", tags: ["fruit", "sweet", "fruit"], year: 2020 }],
    b: ["red cherry", { color: "red", tags: ["fruit"], year: 2021 }],
    c: ["green apple", { color: "green", year: 2020 }],
    d: ["blue car", { color: "blue", tags: [] }],
  });
  const facets = (text: string, limit = 100, filter?: SearchQuery["filter"]) =>
    index.search({
      mode: "fulltext",
      text,
      match: EXACT,
      filter,
      facets: { fields: ["color", "tags", "year", "missing"], limit },
      offset: 0,
      limit: 1,
    }).facets;
  assert.deepEqual(facets("apple cherry"), {
    color: [{ value: "red", count: 2 }, { value: "green", count: 1 }],
    tags: [{ value: "fruit", count: 2 }, { value: "sweet", count: 1 }],
    year: [{ value: 2020, count: 2 }, { value: 2021, count: 1 }],
    missing: [],
  });
  assert.deepEqual(facets("apple cherry", 1)!.color, [{ value: "red", count: 2 }]);
  assert.deepEqual(facets("apple", 100, (metadata) => metadata?.color === "green")!.color, [
    { value: "green", count: 1 },
  ]);
  const vector = doc("x").passages[0]!.vector;
  const all = index.search({
    mode: "vector",
    text: "",
    vector,
    facets: { fields: ["color"], limit: 10 },
    offset: 0,
    limit: 1,
  });
  assert.deepEqual(all.facets!.color, [{ value: "red", count: 2 }, { value: "blue", count: 1 }, {
    value: "green",
    count: 1,
  }], "vector mode counts every document");
});

Deno.test("sort orders every match by metadata before paging, missing values last, ties by score then id", () => {
  const docs: Record<string, [string, Record<string, unknown>]> = {};
  for (let i = 0; i < 30; i++) docs[`d${String(i).padStart(2, "0")}`] = [`apple ${i % 3 ? "pie" : ""}`, { n: i % 7 }];
  docs.none = ["apple apple apple", {}];
  const index = indexOf(docs);
  const page = (order: "asc" | "desc", offset: number) =>
    index.search({ mode: "fulltext", text: "apple", match: EXACT, sort: [{ field: "n", order }], offset, limit: 8 })
      .hits;
  const asc = [0, 8, 16, 24].flatMap((offset) => page("asc", offset));
  assert.equal(asc.length, 31);
  const values = asc.map((hit) => (index.content(hit.id)!.metadata as { n?: number }).n);
  assert.deepEqual(values.slice(0, 30), [...values.slice(0, 30)].sort((a, b) => a! - b!));
  assert.equal(asc.at(-1)!.id, "none", "a document without the field comes last");
  const desc = [0, 8, 16, 24].flatMap((offset) => page("desc", offset));
  assert.equal(desc.at(-1)!.id, "none", "last in descending order too");
  assert.equal((index.content(desc[0]!.id)!.metadata as { n: number }).n, 6);
  // Within one value: score descending, then id.
  const sixes = asc.filter((hit) => (index.content(hit.id)!.metadata as { n?: number }).n === 0);
  for (let i = 1; i < sixes.length; i++) {
    const [a, b] = [sixes[i - 1]!, sixes[i]!];
    assert.ok(a.score > b.score || (a.score === b.score && a.id < b.id));
  }
});

Deno.test("a snapshot keeps the language, the stems and the typed words, and answers the same", async () => {
  const index = indexOf({
    a: ["Die Läufer laufen schnell", { kind: "sport" }],
    b: ["Das Haus ist groß", { kind: "home" }],
  }, "german");
  const bytes = await snapshotBytes(index);
  const restored = await decodeSearchSnapshot(bytes, { language: "german" });
  assert.equal(restored.analyzer.language, "german");
  for (const text of ["laufer", "Läufer", "Hause", "lauf", "schnel"]) {
    const query: SearchQuery = {
      mode: "fulltext",
      text,
      match: FUZZY,
      facets: { fields: ["kind"], limit: 10 },
      offset: 0,
      limit: 10,
    };
    assert.deepEqual(restored.search(query), index.search(query), text);
  }
  assert.deepEqual(ids(restored, "laufer"), ["a"]);
  await assert.rejects(decodeSearchSnapshot(bytes, { language: "english" }), /language/);
});

Deno.test("a typo on the first letter counts as two, so one typo never changes a word's first letter", () => {
  const index = indexOf({ house: "house", mouse: "mouse" });
  const typos = { match: { typoTolerance: true, prefix: false } };
  assert.deepEqual(ids(index, "hpuse", typos), ["house"], "a typo after the first letter is one");
  assert.deepEqual(ids(index, "jouse", typos), [], "a typo on the first letter is two, more than 5 letters allow");
  const long = indexOf({ exact: "lanterns of rivers", other: "manternoid" });
  assert.deepEqual(ids(long, "lanternoid", typos), ["other"], "at 9 letters two typos may fall on the first letter");
});

Deno.test("with enough matches as typed, words the index holds get no typo matches; with few, they do", () => {
  const many = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`h${i}`, "house"]));
  const match = { typoTolerance: true, prefix: false, enough: 10 };
  const crowded = indexOf({ ...many, horse: "horse" });
  assert.ok(!ids(crowded, "house", { match }).includes("horse"), "12 documents hold house: no typo lookup");
  assert.ok(ids(crowded, "hovse", { match }).includes("horse"), "a word no document holds is looked up with typos");
  const sparse = indexOf({ h0: "house", horse: "horse" });
  assert.deepEqual(ids(sparse, "house", { match }), ["h0", "horse"], "one document holds house: typos fill in");
  assert.deepEqual(ids(crowded, "house", { match: FUZZY }).length, 13, "without enough, every word is looked up");
});
