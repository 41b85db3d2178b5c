/**
 * Black-box, through `POST /manage` of a real server process only: full-text search by language (folding, stemming,
 * stop words), typo tolerance and prefixes, highlights and snippets, facets and sorting, over Debian's licence texts
 * split into paragraphs and small hand-written documents, and all of it surviving a restart.
 *
 * One server process serves every test (and the last one restarts it), so that the corpus is indexed once: the tests
 * share it across `Deno.test`s and therefore turn the resource and op sanitizers off.
 */
import assert from "node:assert/strict";
import { assertJsonError } from "../_helpers.ts";
import { ok, serverEnvironment, type ServerProcess, startServerProcess } from "../_server_process.ts";

/** Every language `createIndex` accepts in `options.language`. */
const LANGUAGES = [
  "arabic",
  "armenian",
  "bulgarian",
  "danish",
  "dutch",
  "english",
  "finnish",
  "french",
  "german",
  "greek",
  "hungarian",
  "indian",
  "indonesian",
  "irish",
  "italian",
  "lithuanian",
  "nepali",
  "norwegian",
  "portuguese",
  "romanian",
  "russian",
  "sanskrit",
  "serbian",
  "spanish",
  "swedish",
  "tamil",
  "turkish",
  "ukrainian",
];

/** Debian's licence texts that make the corpus, one document per paragraph. */
const LICENCES = ["GPL-3", "Apache-2.0", "MPL-2.0", "LGPL-2.1", "GFDL-1.3"];

/** The `topics` a paragraph gets (an array-valued field) when its text matches the pattern. */
const TOPICS: [string, RegExp][] = [
  ["copyright", /\bcopyright/i],
  ["patent", /\bpatent/i],
  ["trademark", /\btrademark/i],
  ["warranty", /\bwarrant/i],
];

type Value = string | number;

interface Doc {
  id: string;
  text: string;
  metadata?: Record<string, unknown>;
}

interface Span {
  start: number;
  end: number;
}

interface Snippet {
  text: string;
  highlights: Span[];
}

interface Hit {
  id: string;
  score?: number;
  text?: string;
  metadata?: Record<string, unknown>;
  highlights?: Span[];
  snippet?: Snippet;
}

interface FacetCount {
  value: Value;
  count: number;
}

interface SearchResult {
  hits: Hit[];
  total: number;
  tookMs: number;
  facets?: Record<string, FacetCount[]>;
}

interface SortKey {
  field: string;
  order: "asc" | "desc";
}

/** The licence paragraphs: `licence`, `paragraph`, `words` and `topics` on each, `section` on numbered ones only. */
function licenceDocs(): Doc[] {
  const docs: Doc[] = [];
  for (const licence of LICENCES) {
    const text = Deno.readTextFileSync(`/usr/share/common-licenses/${licence}`);
    const paragraphs = text.split(/\n\s*\n/).map((paragraph) => paragraph.trim()).filter(Boolean);
    paragraphs.forEach((paragraph, i) => {
      const metadata: Record<string, unknown> = {
        licence,
        paragraph: i,
        words: paragraph.split(/\s+/).length,
        topics: TOPICS.filter(([, pattern]) => pattern.test(paragraph)).map(([topic]) => topic),
      };
      const section = paragraph.match(/^(\d+)\./)?.[1];
      if (section !== undefined) metadata.section = Number(section);
      docs.push({ id: `${licence}/${String(i).padStart(3, "0")}`, text: paragraph, metadata });
    });
  }
  return docs;
}

const LICENCE_DOCS = licenceDocs();

/** One-word documents, one per length around the typo thresholds; `letters` is the word's length. */
const TYPO_DOCS: Doc[] = [
  ["t10", "background"],
  ["t9", "blackbird"],
  ["t8", "farmland"],
  ["t6", "planet"],
  ["t5", "plank"],
  ["t4", "lamp"],
].map(([id, text]) => ({ id: id!, text: text!, metadata: { letters: text!.length } }));

/**
 * One-word documents of equal BM25 weight (one term each, each term in one document), whose ids sort the other way
 * round from the expected ranking, so that a tie broken by id would show.
 */
const RANK_DOCS: Doc[] = [
  { id: "a-two-typos", text: "blxckbxrd" },
  { id: "b-one-typo", text: "blxckbird" },
  { id: "c-exact", text: "blackbird" },
  { id: "d-typo", text: "plonk" },
  { id: "e-exact", text: "plank" },
  { id: "f-prefix", text: "lamppost" },
  { id: "g-exact", text: "lamp" },
];

/** Short English sentences for stemming, prefixes, folding and stop words. */
const WORD_DOCS: Doc[] = [
  { id: "pw", text: "Choose a strong password for your account" },
  { id: "router", text: "Reset the router before calling support" },
  { id: "lantern", text: "A lantern glowed in the dark" },
  { id: "runs", text: "She runs along the river every morning" },
  { id: "running", text: "Running shoes are on sale" },
  { id: "cafe", text: "Meet me at the Café on the corner" },
  { id: "hamlet", text: "To be, or not to be" },
  { id: "ferry", text: "The ferry is about to leave" },
];

/** German sentences, indexed once as German and once as English. */
const GERMAN_DOCS: Doc[] = [
  { id: "laeufer", text: "Der Läufer trainiert jeden Morgen im Park" },
  { id: "haus", text: "In den alten Häusern wohnen viele Familien" },
  { id: "kinder", text: "Die Kinder spielen und lachen im Garten" },
  { id: "strasse", text: "Die Straße ist heute nass" },
];

/** Words of real prose (GPL-3 from its preamble on), which hold no "zeppelin". */
const PROSE = Deno.readTextFileSync("/usr/share/common-licenses/GPL-3").split("Preamble")[1]!.split(/\s+/)
  .filter(Boolean);

/** `count` prose words from `skip` on. */
function prose(count: number, skip = 0): string {
  return PROSE.slice(skip, skip + count).join(" ");
}

/** Long texts with "zeppelin" at the start, in the middle and at the end, and one short one. */
const SNIPPET_DOCS: Doc[] = [
  { id: "start", text: `Zeppelin ${prose(60)}` },
  { id: "middle", text: `${prose(30, 100)} zeppelin ${prose(30, 200)}` },
  { id: "end", text: `${prose(60, 300)} zeppelin` },
  { id: "short", text: "A zeppelin over the bay" },
];

/** Every index the tests search, created once: name, documents and language (the default when absent). */
const INDEXES: [string, Doc[], string?][] = [
  ["licences", LICENCE_DOCS],
  ["typos", TYPO_DOCS],
  ["rank", RANK_DOCS],
  ["words", WORD_DOCS],
  ["deutsch", GERMAN_DOCS, "german"],
  ["deutsch-en", GERMAN_DOCS, "english"],
  ["snippets", SNIPPET_DOCS],
];

/** Searches `indexName` and asserts a 200. */
async function search(server: ServerProcess, indexName: string, body: Record<string, unknown>): Promise<SearchResult> {
  return await ok<SearchResult>(server, { action: "search", indexName, ...body });
}

/** Full-text searches `indexName` and returns the ids of the hits, sorted. */
async function fulltextIds(
  server: ServerProcess,
  indexName: string,
  query: string,
  options: Record<string, unknown> = {},
): Promise<string[]> {
  const result = await search(server, indexName, { query, mode: "fulltext", include: [], limit: 100, ...options });
  assert.equal(result.total, result.hits.length, `all ${result.total} hits of "${query}" fit one page`);
  return result.hits.map((hit) => hit.id).sort();
}

/** Every hit of a search, page by page, and the total the first page reported. */
async function allHits(
  server: ServerProcess,
  indexName: string,
  body: Record<string, unknown>,
  pageSize: number,
): Promise<{ hits: Hit[]; total: number }> {
  const first = await search(server, indexName, { ...body, limit: pageSize, offset: 0 });
  const hits = [...first.hits];
  while (hits.length < first.total) {
    const page = await search(server, indexName, { ...body, limit: pageSize, offset: hits.length });
    assert.equal(page.total, first.total, "every page reports the same total");
    if (page.hits.length === 0) break;
    hits.push(...page.hits);
  }
  return { hits, total: first.total };
}

/** The index as `getIndex` shows it, without `memoryBytes` (what the answering process holds). */
async function getIndex(server: ServerProcess, indexName: string): Promise<Record<string, unknown>> {
  const { memoryBytes: _, ...index } = await ok<Record<string, unknown>>(server, { action: "getIndex", indexName });
  return index;
}

/** Lower case without diacritics, as a user compares words. */
function fold(word: string): string {
  return word.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
}

/** The folded words of `text`. */
function words(text: string): string[] {
  return text.split(/[^\p{L}\p{M}\p{N}]+/u).filter(Boolean).map(fold);
}

/** The ids of `docs` whose text holds one of `wanted` as a word, sorted. */
function idsWithWord(docs: Doc[], wanted: string[]): string[] {
  return docs.filter((doc) => words(doc.text).some((word) => wanted.includes(word))).map((doc) => doc.id).sort();
}

const WORD_CHARACTER = /[\p{L}\p{M}\p{N}]/u;

/**
 * Asserts that `spans` are ascending, disjoint, within `text` and each a whole word of it, and returns the words.
 */
function highlightedWords(text: string, spans: Span[] | undefined, label: string): string[] {
  assert.ok(Array.isArray(spans), `${label}: highlights are an array`);
  let previousEnd = 0;
  for (const { start, end } of spans) {
    assert.ok(Number.isInteger(start) && Number.isInteger(end), `${label}: integer offsets ${start}..${end}`);
    assert.ok(previousEnd <= start && start < end && end <= text.length, `${label}: ${start}..${end} in order`);
    assert.ok(!WORD_CHARACTER.test(text[start - 1] ?? " "), `${label}: ${start} starts a word`);
    assert.ok(!WORD_CHARACTER.test(text[end] ?? " "), `${label}: ${end} ends a word`);
    previousEnd = end;
  }
  return spans.map(({ start, end }) => text.slice(start, end));
}

/** The spans of every match of `pattern` (global) in `text`. */
function spansOf(text: string, pattern: RegExp): Span[] {
  return [...text.matchAll(pattern)].map((match) => ({ start: match.index, end: match.index + match[0].length }));
}

/** Orders two values of one field: numbers by value, strings by code point. */
function compareValues(a: Value, b: Value): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The facet counts of `field` over `docs` as the service must give them: count desc, then value, `limit` at most. */
function expectedFacet(docs: Doc[], field: string, limit = 100): FacetCount[] {
  const counts = new Map<Value, number>();
  for (const doc of docs) {
    const value = doc.metadata?.[field];
    if (value === undefined) continue;
    for (const element of Array.isArray(value) ? value : [value]) {
      counts.set(element as Value, (counts.get(element as Value) ?? 0) + 1);
    }
  }
  return [...counts].map(([value, count]) => ({ value, count }))
    .sort((a, b) => b.count - a.count || compareValues(a.value, b.value))
    .slice(0, limit);
}

/** The licence paragraphs `filter` keeps: a predicate written in the test, beside the Mongo filter sent. */
function licencesWhere(keep: (metadata: Record<string, unknown>) => boolean): Doc[] {
  return LICENCE_DOCS.filter((doc) => keep(doc.metadata!));
}

/** Asserts that `hits` are in the order of `sort`, then score (desc), then id; a missing field sorts last. */
function assertSorted(hits: Hit[], sort: SortKey[], label: string): void {
  for (let i = 1; i < hits.length; i++) {
    const [a, b] = [hits[i - 1]!, hits[i]!];
    const pair = `${label}: #${i - 1} ${a.id} ${JSON.stringify(a.metadata)} ${a.score} before #${i} ${b.id} ${
      JSON.stringify(b.metadata)
    } ${b.score}`;
    let decided = false;
    for (const { field, order } of sort) {
      const [x, y] = [a.metadata?.[field] as Value | undefined, b.metadata?.[field] as Value | undefined];
      if (x === undefined && y === undefined) continue;
      assert.ok(y === undefined || x !== undefined, `${pair}: a document lacking "${field}" comes last`);
      if (y === undefined) {
        decided = true;
        break;
      }
      const comparison = compareValues(x!, y) * (order === "asc" ? 1 : -1);
      assert.ok(comparison <= 0, `${pair}: "${field}" ${order}`);
      if (comparison < 0) {
        decided = true;
        break;
      }
    }
    if (decided) continue;
    assert.ok(a.score! >= b.score!, `${pair}: equal keys, so by score`);
    if (a.score === b.score) assert.ok(a.id < b.id, `${pair}: equal keys and score, so by id`);
  }
}

/** The parts of a result that must not change on a restart: everything but the time it took. */
function outcome(result: SearchResult): Omit<SearchResult, "tookMs"> {
  const { tookMs: _, ...rest } = result;
  return rest;
}

/** The shared server process and the environment to restart it with. */
interface Quire {
  server: ServerProcess;
  env: Record<string, string>;
}

let quire: Promise<Quire> | undefined;
let running: ServerProcess | undefined;

// A run that filters out the restart test, which stops the shared server, must not leave the process behind.
globalThis.addEventListener("unload", () => {
  if (running === undefined) return;
  try {
    Deno.kill(running.pid, "SIGTERM");
  } catch {
    // It has exited already.
  }
});

/** The shared server, with {@link INDEXES} created on its first use. */
function sharedQuire(): Promise<Quire> {
  quire ??= (async () => {
    const env = { ...await serverEnvironment(), LOG_REQUESTS: "false" };
    const server = await startServerProcess(env);
    running = server;
    for (const [indexName, docs, language] of INDEXES) {
      const options = language === undefined ? {} : { options: { language } };
      await ok(server, { action: "createIndex", indexName, docs, ...options });
    }
    return { server, env };
  })();
  return quire;
}

/** A test on the shared server. */
function test(name: string, fn: (server: ServerProcess, t: Deno.TestContext) => Promise<void>): void {
  Deno.test({
    name,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async (t) => fn((await sharedQuire()).server, t),
  });
}

test("createIndex takes each of the 28 languages and getIndex shows it; english is the default", async (server) => {
  for (const language of LANGUAGES) {
    await ok(server, { action: "createIndex", indexName: `lang-${language}`, docs: [], options: { language } });
  }
  for (const language of LANGUAGES) {
    assert.equal((await getIndex(server, `lang-${language}`)).language, language);
  }
  assert.equal((await getIndex(server, "words")).language, "english", "no language given");
  assert.equal((await getIndex(server, "deutsch")).language, "german");
});

test("createIndex with an unknown language is 400 listing every accepted one, and makes no index", async (server) => {
  for (const language of ["klingon", "", 7]) {
    const response = await server.call({ action: "createIndex", indexName: "alien", docs: [], options: { language } });
    const { error } = await assertJsonError(response, 400, /language/);
    if (typeof language === "string") {
      for (const accepted of LANGUAGES) assert.ok(error.includes(accepted), `"${accepted}" is listed: ${error}`);
    }
    await assertJsonError(await server.call({ action: "getIndex", indexName: "alien" }), 404);
  }
});

test("terms fold case and diacritics, and stem by the index's language", async (server) => {
  const include = ["text", "highlights"];
  for (const query of ["running", "runs", "RUN"]) {
    const result = await search(server, "words", { query, mode: "fulltext", include, prefix: false });
    assert.deepEqual(result.hits.map((hit) => hit.id).sort(), ["running", "runs"], `"${query}" finds both forms`);
    for (const hit of result.hits) {
      assert.deepEqual(highlightedWords(hit.text!, hit.highlights, hit.id), [hit.id === "runs" ? "runs" : "Running"]);
    }
  }
  for (const query of ["cafe", "CAFÉ", "cafè"]) {
    const result = await search(server, "words", { query, mode: "fulltext", include });
    assert.deepEqual(result.hits.map((hit) => hit.id), ["cafe"], `"${query}"`);
    assert.deepEqual(highlightedWords(result.hits[0]!.text!, result.hits[0]!.highlights, query), ["Café"]);
  }
  for (const query of ["laufer", "LÄUFER", "Läufer"]) {
    const result = await search(server, "deutsch", { query, mode: "fulltext", include });
    assert.deepEqual(result.hits.map((hit) => hit.id), ["laeufer"], `"${query}"`);
    assert.deepEqual(highlightedWords(result.hits[0]!.text!, result.hits[0]!.highlights, query), ["Läufer"]);
  }
  // German stems "Häusern" to "haus" and "Kindern" to "kind"; English stems neither so (typos and prefixes off, so
  // that only stems can match).
  const exact = { typoTolerance: false, prefix: false };
  assert.deepEqual(await fulltextIds(server, "deutsch", "Haus", exact), ["haus"]);
  assert.deepEqual(await fulltextIds(server, "deutsch", "kindern", exact), ["kinder"]);
  assert.deepEqual(await fulltextIds(server, "deutsch-en", "Haus", exact), []);
  assert.deepEqual(await fulltextIds(server, "deutsch-en", "kindern", exact), []);
  const haus = await search(server, "deutsch", { query: "haus", mode: "fulltext", include, ...exact });
  assert.deepEqual(highlightedWords(haus.hits[0]!.text!, haus.hits[0]!.highlights, "haus"), ["Häusern"]);
});

test("stop words are dropped from queries, and a query of stop words only finds the documents holding them", async (server) => {
  const noPrefix = { prefix: false };
  const toBe = idsWithWord(WORD_DOCS, ["to", "be"]);
  assert.deepEqual(toBe, ["ferry", "hamlet"], "the corpus has what the test expects");
  assert.deepEqual(await fulltextIds(server, "words", "to be", noPrefix), toBe, "only stop words: still searched");
  assert.deepEqual(await fulltextIds(server, "words", "the", noPrefix), idsWithWord(WORD_DOCS, ["the"]));
  assert.deepEqual(await fulltextIds(server, "words", "to ferry", noPrefix), ["ferry"], `"to" is dropped`);
  assert.deepEqual(await fulltextIds(server, "words", "the lantern", noPrefix), ["lantern"], `"the" is dropped`);

  // German stop words in a German index; the same query in an English index keeps "die".
  const undDie = idsWithWord(GERMAN_DOCS, ["und", "die"]);
  assert.deepEqual(undDie, ["kinder", "strasse"]);
  assert.deepEqual(await fulltextIds(server, "deutsch", "und die", noPrefix), undDie);
  assert.deepEqual(await fulltextIds(server, "deutsch", "die Garten", noPrefix), ["kinder"], `"die" is dropped`);
  assert.deepEqual(await fulltextIds(server, "deutsch-en", "die Garten", noPrefix), ["kinder", "strasse"]);

  const hamlet = await search(server, "words", {
    query: "to be",
    mode: "fulltext",
    include: ["text", "highlights"],
    ...noPrefix,
  });
  const hit = hamlet.hits.find((hit) => hit.id === "hamlet")!;
  assert.deepEqual(highlightedWords(hit.text!, hit.highlights, "hamlet").map(fold), ["to", "be", "to", "be"]);
});

test(
  "a query term of 5 to 8 characters matches with one typo, of 9 or more with two, and a shorter one only exactly",
  async (server, t) => {
    const cases: [string, string[], string][] = [
      ["bxckgrxund", ["t10"], "10 characters, 2 substitutions"],
      ["blxckbxrd", ["t9"], "9 characters, 2 substitutions"],
      ["bxxckbxrd", [], "9 characters, 3 substitutions"],
      ["blakbird", ["t9"], "8 characters, 1 deletion"],
      ["backgrnd", [], "8 characters, 2 deletions"],
      ["fxrmland", ["t8"], "8 characters, 1 substitution"],
      ["fxrmlxnd", [], "8 characters, 2 substitutions"],
      ["plxnet", ["t6"], "6 characters, 1 substitution"],
      ["plxnxt", [], "6 characters, 2 substitutions"],
      ["plxnk", ["t5"], "5 characters, 1 substitution"],
      ["plank", ["t5"], "5 characters, exact (2 edits from planet)"],
      ["limp", [], "4 characters, 1 substitution"],
      ["lamp", ["t4"], "4 characters, exact"],
      ["blxckbxrd plxnet limp", ["t6", "t9"], "each term by its own length"],
    ];
    for (const [query, expected, why] of cases) {
      await t.step(`"${query}": ${why}`, async () => {
        assert.deepEqual(await fulltextIds(server, "typos", query), expected);
        assert.deepEqual(await fulltextIds(server, "typos", query, { typoTolerance: true }), expected);
      });
    }
  },
);

test("typoTolerance false matches only exact terms, and a filter applies to typo matches", async (server) => {
  for (const query of ["bxckgrxund", "blxckbxrd", "blakbird", "fxrmland", "plxnet", "plxnk"]) {
    assert.deepEqual(await fulltextIds(server, "typos", query, { typoTolerance: false }), [], `"${query}"`);
  }
  assert.deepEqual(await fulltextIds(server, "typos", "plank lamp", { typoTolerance: false }), ["t4", "t5"]);
  assert.deepEqual(await fulltextIds(server, "typos", "plxnk plxnet"), ["t5", "t6"]);
  assert.deepEqual(await fulltextIds(server, "typos", "plxnk plxnet", { filter: { letters: { $gte: 6 } } }), ["t6"]);
  assert.deepEqual(await fulltextIds(server, "typos", "plxnk plxnet", { filter: { letters: 5 } }), ["t5"]);
});

test("an exact match ranks above a typo match of equal weight, and fewer typos above more", async (server) => {
  const ranked = async (query: string) => {
    const result = await search(server, "rank", { query, mode: "fulltext", include: ["score"] });
    const scores = result.hits.map((hit) => hit.score!);
    assert.ok(scores.every((score, i) => i === 0 || scores[i - 1]! >= score), `"${query}": scores descend ${scores}`);
    return result.hits.map((hit) => hit.id);
  };
  assert.deepEqual(await ranked("blackbird"), ["c-exact", "b-one-typo", "a-two-typos"]);
  assert.deepEqual(await ranked("plank"), ["e-exact", "d-typo"]);
  assert.deepEqual(await ranked("plonk"), ["d-typo", "e-exact"], "the other way round");
  assert.deepEqual(await ranked("blxckbird"), ["b-one-typo", "a-two-typos", "c-exact"]);
});

test("the last query term also matches as a prefix, ranked below an exact match; prefix false turns it off", async (server) => {
  assert.deepEqual(await fulltextIds(server, "words", "reset passw"), ["pw", "router"]);
  assert.deepEqual(await fulltextIds(server, "words", "passw reset"), ["router"], "only the last term is a prefix");
  assert.deepEqual(await fulltextIds(server, "words", "lant"), ["lantern"], "a lone 4-letter prefix");
  assert.deepEqual(await fulltextIds(server, "words", "lant", { prefix: true }), ["lantern"]);
  assert.deepEqual(await fulltextIds(server, "words", "lant", { prefix: false }), []);
  assert.deepEqual(await fulltextIds(server, "words", "reset passw", { prefix: false }), ["router"]);

  const lamp = await search(server, "rank", { query: "lamp", mode: "fulltext", include: ["score"] });
  assert.deepEqual(lamp.hits.map((hit) => hit.id), ["g-exact", "f-prefix"], "exact above prefix");
  assert.ok(lamp.hits[0]!.score! >= lamp.hits[1]!.score!);
  assert.deepEqual(await fulltextIds(server, "rank", "lamp", { prefix: false }), ["g-exact"]);

  // Typing "licensing" letter by letter: every prefix from 4 letters on finds the paragraphs holding the word, though
  // a stemmer would cut the word to "licens" (typos off, so that only the prefix can match).
  const licensing = LICENCE_DOCS.filter((doc) => /\blicensing\b/i.test(doc.text)).map((doc) => doc.id);
  assert.ok(licensing.length > 0);
  for (let length = 4; length <= "licensing".length; length++) {
    const typed = "licensing".slice(0, length);
    const body = { query: typed, mode: "fulltext", include: [], typoTolerance: false };
    const found = (await allHits(server, "licences", body, 100)).hits.map((hit) => hit.id);
    const missing = licensing.filter((id) => !found.includes(id));
    assert.deepEqual(missing, [], `"${typed}" finds every paragraph with "licensing"`);
  }
});

test("highlights are the offsets of every matched word in the hit's text, typo and prefix matches included", async (server) => {
  const warranty = /\bwarrant(?:y|ies)\b/gi;
  const holding = LICENCE_DOCS.filter((doc) => doc.text.match(warranty) !== null).map((doc) => doc.id).sort();
  const include = ["text", "highlights"];
  const exact = await search(server, "licences", {
    query: "warranty",
    mode: "fulltext",
    include,
    limit: 100,
    typoTolerance: false,
    prefix: false,
  });
  assert.deepEqual(exact.hits.map((hit) => hit.id).sort(), holding, "the hits are the paragraphs with the word");
  for (const hit of exact.hits) {
    assert.deepEqual(hit.highlights, spansOf(hit.text!, warranty), `${hit.id}: every "warranty" and "warranties"`);
    highlightedWords(hit.text!, hit.highlights, hit.id);
  }

  // One typo finds the same words, highlighted alike.
  const typo = await search(server, "licences", { query: "warrenty", mode: "fulltext", include, limit: 100 });
  const byId = (result: SearchResult) => Object.fromEntries(result.hits.map((hit) => [hit.id, hit.highlights]));
  assert.deepEqual(byId(typo), byId(exact));

  // The prefix "sublic" of the last term highlights "sublicense", "sublicensing" and "sublicenses" too.
  const both = /\b(?:warrant(?:y|ies)|sublic[a-z]*)\b/gi;
  const prefixed = await search(server, "licences", {
    query: "warranty sublic",
    mode: "fulltext",
    include,
    limit: 100,
    typoTolerance: false,
  });
  assert.ok(prefixed.hits.some((hit) => /\bsublic/i.test(hit.text!)), "some hit holds a word starting with sublic");
  for (const hit of prefixed.hits) assert.deepEqual(hit.highlights, spansOf(hit.text!, both), hit.id);

  // Typo, stem and prefix matches in one query: "glowd" is a typo of "glowed", "runing" stems like "runs" and
  // "Running", "lant" is a prefix of "lantern".
  const mixed = await search(server, "words", { query: "glowd runing lant", mode: "fulltext", include });
  const shown = Object.fromEntries(
    mixed.hits.map((hit) => [hit.id, highlightedWords(hit.text!, hit.highlights, hit.id)]),
  );
  assert.deepEqual(shown, { lantern: ["lantern", "glowed"], running: ["Running"], runs: ["runs"] });
});

test("in vector mode highlights are the query terms found in the text, possibly none", async (server) => {
  const result = await search(server, "words", {
    query: "lantern dark",
    mode: "vector",
    include: ["text", "highlights"],
    limit: 100,
  });
  assert.equal(result.total, WORD_DOCS.length, "vector mode ranks every document");
  for (const hit of result.hits) {
    const shown = highlightedWords(hit.text!, hit.highlights, hit.id);
    assert.deepEqual(shown, hit.id === "lantern" ? ["lantern", "dark"] : [], hit.id);
  }
});

test("a snippet is about 20 words around the best match, with … where cut, and highlights into its own text", async (server) => {
  const result = await search(server, "snippets", {
    query: "zeppelin",
    mode: "fulltext",
    include: ["text", "snippet"],
  });
  assert.deepEqual(result.hits.map((hit) => hit.id).sort(), ["end", "middle", "short", "start"]);
  const snippets = Object.fromEntries(result.hits.map((hit) => [hit.id, hit.snippet!]));
  for (const hit of result.hits) {
    const { text, highlights } = hit.snippet!;
    const shown = highlightedWords(text, highlights, `${hit.id} snippet`);
    assert.deepEqual(shown.map(fold), ["zeppelin"], `${hit.id}: the match is in the snippet`);
    const inner = text.replace(/^…/, "").replace(/…$/, "");
    assert.ok(hit.text!.includes(inner), `${hit.id}: the snippet is a part of the text: ${JSON.stringify(text)}`);
    assert.equal(text.startsWith("…"), !hit.text!.startsWith(inner), `${hit.id}: "…" exactly where cut at the start`);
    assert.equal(text.endsWith("…"), !hit.text!.endsWith(inner), `${hit.id}: "…" exactly where cut at the end`);
  }
  assert.deepEqual(snippets.short, { text: "A zeppelin over the bay", highlights: [{ start: 2, end: 10 }] });
  assert.match(snippets.start!.text, /^Zeppelin .*…$/s);
  assert.match(snippets.end!.text, /^….* zeppelin$/s);
  assert.match(snippets.middle!.text, /^….* zeppelin .*…$/s);
  for (const id of ["start", "middle", "end"]) {
    const count = snippets[id]!.text.split(/\s+/).length;
    assert.ok(15 <= count && count <= 25, `${id}: ${count} words in ${JSON.stringify(snippets[id]!.text)}`);
  }
  const middle = snippets.middle!.text;
  const before = middle.slice(0, middle.indexOf(" zeppelin ")).split(/\s+/).length;
  const after = middle.slice(middle.indexOf(" zeppelin ") + 10).split(/\s+/).length;
  assert.ok(Math.abs(before - after) <= 4, `the match is near the middle: ${before} words before, ${after} after`);

  const typo = await search(server, "snippets", { query: "zepelin", mode: "fulltext", include: ["snippet"] });
  assert.deepEqual(
    Object.fromEntries(typo.hits.map((hit) => [hit.id, hit.snippet])),
    snippets,
    "a typo match gives the same snippets",
  );

  // Real prose: long licence paragraphs, with line breaks and indentation.
  const licences = await search(server, "licences", {
    query: "merchantability",
    mode: "fulltext",
    include: ["text", "snippet"],
    typoTolerance: false,
    limit: 100,
  });
  assert.ok(licences.total >= 3);
  for (const hit of licences.hits) {
    const { text, highlights } = hit.snippet!;
    // "merchantable" stems like "merchantability" does.
    const shown = highlightedWords(text, highlights, hit.id).map(fold);
    assert.ok(shown.some((word) => ["merchantability", "merchantable"].includes(word)), `${hit.id}: ${shown}`);
    const inner = text.replace(/^…/, "").replace(/…$/, "");
    assert.ok(hit.text!.includes(inner), `${hit.id}: ${JSON.stringify(text)} is a part of the text`);
    const count = inner.trim().split(/\s+/).length;
    assert.ok(count <= 25, `${hit.id}: ${count} words`);
    if (hit.text!.split(/\s+/).length > 30) assert.ok(text.includes("…"), `${hit.id}: a long paragraph is cut`);
  }
});

test("facet counts cover every match of the query and the filter, not just the page, by count then value", async (server) => {
  // Typos and prefixes off, so that the test knows the matches: the paragraphs with "patent" or "patents".
  const exact = { mode: "fulltext", typoTolerance: false, prefix: false, include: [] };
  const patent = LICENCE_DOCS.filter((doc) => /\bpatents?\b/i.test(doc.text));
  assert.ok(patent.length > 10);
  const fields = ["licence", "topics", "section", "paragraph", "nowhere"];
  const all = await search(server, "licences", { query: "patent", limit: 1, facets: fields, ...exact });
  assert.equal(all.total, patent.length);
  assert.equal(all.hits.length, 1);
  assert.deepEqual(all.facets, Object.fromEntries(fields.map((field) => [field, expectedFacet(patent, field)])));
  assert.deepEqual(all.facets!.nowhere, [], "a field no document has");
  assert.ok(all.facets!.topics!.some(({ value }) => value === "warranty"), "an array counts each element");

  const gnu = ["GPL-3", "LGPL-2.1", "GFDL-1.3"];
  const filtered = await search(server, "licences", {
    query: "patent",
    limit: 2,
    offset: 1,
    facets: ["licence", "topics", "section"],
    filter: { licence: { $in: gnu } },
    ...exact,
  });
  const gnuPatent = patent.filter((doc) => gnu.includes(doc.metadata!.licence as string));
  assert.equal(filtered.total, gnuPatent.length);
  assert.deepEqual(filtered.facets, {
    licence: expectedFacet(gnuPatent, "licence"),
    topics: expectedFacet(gnuPatent, "topics"),
    section: expectedFacet(gnuPatent, "section"),
  });

  const limited = await search(server, "licences", {
    query: "patent",
    facets: ["topics", "section"],
    facetLimit: 2,
    ...exact,
  });
  assert.deepEqual(limited.facets, {
    topics: expectedFacet(patent, "topics", 2),
    section: expectedFacet(patent, "section", 2),
  });

  // With typos and prefixes on, the counts are those of every hit, all pages read.
  const body = {
    query: "distribute modifed",
    mode: "fulltext",
    include: ["metadata"],
    filter: { words: { $gte: 20 } },
  };
  const paged = await allHits(server, "licences", body, 40);
  assert.ok(paged.total > 40, `more than one page: ${paged.total}`);
  assert.equal(paged.hits.length, paged.total);
  const matched = paged.hits.map((hit) => ({ id: hit.id, text: "", metadata: hit.metadata! }));
  const faceted = await search(server, "licences", { ...body, limit: 3, facets: ["licence", "topics", "section"] });
  assert.deepEqual(faceted.facets, {
    licence: expectedFacet(matched, "licence"),
    topics: expectedFacet(matched, "topics"),
    section: expectedFacet(matched, "section"),
  });

  // Neither the page nor the order changes the counts; no facets asked, none given.
  const sorted = await search(server, "licences", {
    ...body,
    limit: 5,
    offset: 7,
    sort: [{ field: "words", order: "desc" }],
    facets: ["licence", "topics", "section"],
  });
  assert.deepEqual(sorted.facets, faceted.facets);
  assert.equal("facets" in (await search(server, "licences", body)), false);
});

test("in vector and hybrid mode facets count every document passing the filter, capped by facetLimit", async (server) => {
  const numbered = licencesWhere((metadata) => metadata.section !== undefined);
  const vector = await search(server, "licences", {
    query: "source code",
    mode: "vector",
    limit: 3,
    filter: { section: { $exists: true } },
    facets: ["licence", "section", "topics"],
    include: [],
  });
  assert.equal(vector.total, numbered.length);
  assert.deepEqual(vector.facets, {
    licence: expectedFacet(numbered, "licence"),
    section: expectedFacet(numbered, "section"),
    topics: expectedFacet(numbered, "topics"),
  });

  // Unfiltered, every paragraph counts; "paragraph" has more than 100 values, so the default cap shows.
  const paragraphs = expectedFacet(LICENCE_DOCS, "paragraph", Infinity);
  assert.ok(paragraphs.length > 100, `${paragraphs.length} paragraph numbers`);
  const hybrid = await search(server, "licences", {
    query: "patent",
    mode: "hybrid",
    limit: 1,
    facets: ["licence", "paragraph"],
    include: [],
  });
  assert.equal(hybrid.total, LICENCE_DOCS.length);
  assert.deepEqual(hybrid.facets!.licence, expectedFacet(LICENCE_DOCS, "licence"));
  assert.equal(hybrid.facets!.paragraph!.length, 100, "facetLimit is 100 by default");
  assert.deepEqual(hybrid.facets!.paragraph, paragraphs.slice(0, 100));

  const capped = await search(server, "licences", {
    query: "patent",
    mode: "hybrid",
    limit: 1,
    facets: ["paragraph", "licence"],
    facetLimit: 3,
    filter: { licence: { $ne: "GPL-3" } },
    include: [],
  });
  const notGpl = licencesWhere((metadata) => metadata.licence !== "GPL-3");
  assert.deepEqual(capped.facets, {
    paragraph: expectedFacet(notGpl, "paragraph", 3),
    licence: expectedFacet(notGpl, "licence", 3),
  });
});

test(
  "sort orders every match by metadata before paging, ties by score then id, documents lacking the field last",
  async (server, t) => {
    const cases: [string, Record<string, unknown>, SortKey[], number][] = [
      ["fulltext, section ascending", { query: "license", mode: "fulltext" }, [{ field: "section", order: "asc" }], 30],
      [
        "fulltext, section descending",
        { query: "license", mode: "fulltext" },
        [{ field: "section", order: "desc" }],
        30,
      ],
      [
        "fulltext with a typo, filtered, licence then section descending",
        { query: "sofware", mode: "fulltext", filter: { licence: { $in: ["GPL-3", "MPL-2.0", "Apache-2.0"] } } },
        [{ field: "licence", order: "asc" }, { field: "section", order: "desc" }],
        17,
      ],
      [
        "vector, filtered, section descending then words ascending",
        { query: "copies of the software", mode: "vector", filter: { licence: { $in: ["MPL-2.0", "Apache-2.0"] } } },
        [{ field: "section", order: "desc" }, { field: "words", order: "asc" }],
        25,
      ],
      ["hybrid, paragraph descending", { query: "warranty" }, [{ field: "paragraph", order: "desc" }], 50],
    ];
    for (const [name, body, sort, pageSize] of cases) {
      await t.step(name, async () => {
        const include = ["metadata", "score"];
        const sorted = await allHits(server, "licences", { ...body, sort, include }, pageSize);
        const unsorted = await allHits(server, "licences", { ...body, include }, 100);
        assert.ok(sorted.total > pageSize, `several pages: ${sorted.total} hits`);
        assert.equal(sorted.total, unsorted.total, "sorting changes no match");
        assert.equal(sorted.hits.length, sorted.total, "the pages hold every match");
        assert.deepEqual(
          sorted.hits.map((hit) => hit.id).sort(),
          unsorted.hits.map((hit) => hit.id).sort(),
          "the same matches, each once",
        );
        const scores = Object.fromEntries(unsorted.hits.map((hit) => [hit.id, hit.score]));
        for (const hit of sorted.hits) assert.equal(hit.score, scores[hit.id], `${hit.id}: sorting keeps its score`);
        assertSorted(sorted.hits, sort, name);
        const lacking = sorted.hits.findIndex((hit) => hit.metadata?.[sort[0]!.field] === undefined);
        if (lacking >= 0) {
          assert.ok(lacking > 0, "some documents have the field");
          assert.ok(
            sorted.hits.slice(lacking).every((hit) => hit.metadata?.[sort[0]!.field] === undefined),
            "documents lacking the field come last",
          );
        }
        if (sorted.total <= 100) {
          const one = await search(server, "licences", { ...body, sort, include, limit: 100 });
          assert.deepEqual(one.hits, sorted.hits, "the pages are one big query's hits");
        }
      });
    }
  },
);

test(
  "an unknown include value, non-array facets and a bad sort order or field are 400 naming the field",
  async (server, t) => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ["include", { include: ["text", "highlight"] }, /include/],
      ["include", { include: ["snippets"] }, /include/],
      ["facets a string", { facets: "licence" }, /facets/],
      ["facets an object", { facets: { licence: true } }, /facets/],
      ["a facet a number", { facets: ["licence", 3] }, /facets/],
      ["a facet null", { facets: [null] }, /facets/],
      ["sort order", { sort: [{ field: "section", order: "up" }] }, /order/],
      ["sort order in capitals", { sort: [{ field: "section", order: "DESC" }] }, /order/],
      ["sort field a number", { sort: [{ field: 5, order: "asc" }] }, /field/],
      ["sort field an array", { sort: [{ field: ["section"], order: "asc" }] }, /field/],
    ];
    for (const mode of ["fulltext", "vector"]) {
      for (const [name, body, field] of cases) {
        await t.step(`${mode}: ${name}`, async () => {
          const response = await server.call({
            action: "search",
            indexName: "licences",
            query: "patent",
            mode,
            ...body,
          });
          await assertJsonError(response, 400, field);
        });
      }
    }
  },
);

test("hits, highlights, snippets, facets and sorted pages are identical after a restart over the same store", async () => {
  const { server, env } = await sharedQuire();
  const all = ["text", "metadata", "score", "highlights", "snippet"];
  const searches: [string, Record<string, unknown>][] = [
    ["licences", { query: "patent warranty", mode: "fulltext", include: all, facets: ["licence", "topics"] }],
    ["licences", {
      query: "distribute modifed",
      include: all,
      facets: ["section"],
      sort: [{ field: "section", order: "desc" }],
      limit: 15,
      offset: 5,
    }],
    ["licences", { query: "warranty sublic", mode: "fulltext", include: ["highlights", "snippet"], limit: 30 }],
    ["licences", {
      query: "source code",
      mode: "vector",
      include: ["score", "highlights"],
      filter: { licence: "GPL-3" },
      facets: ["paragraph", "topics"],
      facetLimit: 5,
    }],
    ["typos", { query: "blxckbxrd plxnk lamp", mode: "fulltext", include: all }],
    ["rank", { query: "blackbird", mode: "fulltext", include: ["score", "highlights"] }],
    ["words", { query: "to be", mode: "fulltext", include: all, prefix: false }],
    ["words", { query: "glowd runing lant", mode: "fulltext", include: all }],
    ["deutsch", { query: "die Läufer Häuser", mode: "fulltext", include: all }],
    ["snippets", { query: "zepelin", mode: "fulltext", include: all }],
  ];
  const before = [];
  for (const [indexName, body] of searches) before.push(outcome(await search(server, indexName, body)));
  const indexes = ["licences", "deutsch", "deutsch-en", "snippets"];
  const indexesBefore = [];
  for (const name of indexes) indexesBefore.push(await getIndex(server, name));
  assert.ok(before.every((result) => result.hits.length > 0), "every search has hits to compare");

  assert.equal(await server.stop("SIGTERM"), 0);
  running = undefined;
  await using second = await startServerProcess(env, server.key);
  for (const [i, name] of indexes.entries()) {
    assert.deepEqual(await getIndex(second, name), indexesBefore[i], `index "${name}" after the restart`);
  }
  for (const [i, [indexName, body]] of searches.entries()) {
    const after = outcome(await search(second, indexName, body));
    assert.deepEqual(after, before[i], `${indexName}: ${JSON.stringify(body).slice(0, 100)} after the restart`);
  }
});
