/**
 * Full-text search over HTTP on real prose (Debian's licence texts, one paragraph per document): languages, typos,
 * prefixes, stemming, highlights, snippets, facets and sort, their validation, and the same answers after a restart.
 */
import assert from "node:assert/strict";
import { assertJsonError, startTestServer, type TestServer } from "../_helpers.ts";
import { licenceParagraphs } from "../_licence_corpus.ts";

interface Hit {
  id: string;
  score: number;
  text: string;
  highlights?: { start: number; end: number }[];
  snippet?: { text: string; highlights: { start: number; end: number }[] };
}

interface Result {
  hits: Hit[];
  total: number;
  facets?: Record<string, { value: unknown; count: number }[]>;
}

const LICENCES = ["GPL-3", "Apache-2.0", "MPL-2.0", "LGPL-2.1", "GFDL-1.3"];

/** Paragraphs of Debian's licence texts with the licence and paragraph number as metadata. */
async function search(server: TestServer, body: Record<string, unknown>): Promise<Result> {
  return await server.ok<Result>({ action: "search", indexName: "licences", mode: "fulltext", ...body });
}

function words(hit: Hit): string[] {
  return (hit.highlights ?? []).map(({ start, end }) => hit.text.slice(start, end).toLowerCase());
}

Deno.test("full-text search on real prose finds typos, prefixes and stems, and ranks the exact match first", async () => {
  await using server = await startTestServer();
  const docs = licenceParagraphs(LICENCES);
  assert.ok(docs.length > 250, `${docs.length} paragraphs`);
  await server.ok({ action: "createIndex", indexName: "licences", docs });
  const index = await server.ok<{ language: string }>({ action: "getIndex", indexName: "licences" });
  assert.equal(index.language, "english");

  const exact = await search(server, { query: "warranty", typoTolerance: false, prefix: false });
  assert.ok(exact.total > 10);
  const typo = await search(server, { query: "waranty", include: ["text", "highlights"] });
  assert.equal(typo.total, exact.total, "one typo finds every document the right spelling finds");
  assert.ok(typo.hits.every((hit) => words(hit).some((word) => word.startsWith("warrant"))));
  assert.equal((await search(server, { query: "waranty", typoTolerance: false })).total, 0);

  const prefix = await search(server, { query: "redistrib", include: ["text", "highlights"] });
  assert.ok(prefix.total > 5, "the last word is a prefix");
  assert.ok(prefix.hits[0]!.highlights!.length > 0);
  assert.equal((await search(server, { query: "redistrib", prefix: false, typoTolerance: false })).total, 0);

  // Stems: "licensed" finds paragraphs that only say "licenses" or "license".
  const stemmed = await search(server, { query: "licensed", typoTolerance: false, prefix: false, limit: 100 });
  const plain = await search(server, { query: "license", typoTolerance: false, prefix: false, limit: 100 });
  assert.equal(stemmed.total, plain.total);

  // An exact match above a typo match: a paragraph that says "software" outranks one whose only match is a typo.
  const mixed = await search(server, { query: "softwar", include: ["text", "highlights"], limit: 100 });
  assert.ok(mixed.total > 0);
  const ranks = mixed.hits.map((hit) => words(hit).includes("softwar"));
  assert.equal(ranks.lastIndexOf(true) < ranks.indexOf(false) || !ranks.includes(true), true);

  // Highlights point at words of the text; snippets are short, cut with an ellipsis, with their own offsets.
  const shown = await search(server, { query: "patent license", include: ["text", "highlights", "snippet"] });
  for (const hit of shown.hits) {
    for (const word of words(hit)) assert.match(word, /^(patent|licen)/);
    const snippet = hit.snippet!;
    assert.ok(snippet.text.split(/\s+/).length <= 22, snippet.text);
    for (const { start, end } of snippet.highlights) assert.match(snippet.text.slice(start, end), /^(patent|licen)/i);
    if (hit.text.split(/\s+/).length > 30) assert.ok(snippet.text.includes("…"));
  }
});

Deno.test("facets count every match, sort orders all matches before the page, in every mode", async () => {
  await using server = await startTestServer();
  const docs = licenceParagraphs(LICENCES);
  await server.ok({ action: "createIndex", indexName: "licences", docs });
  const query = "copyright";
  const all = await search(server, { query, limit: 100, include: ["metadata"] });
  const counts = new Map<string, number>();
  for (const doc of docs) {
    const matching = /copyright/i.test(doc.text);
    if (matching) counts.set(doc.metadata.licence, (counts.get(doc.metadata.licence) ?? 0) + 1);
  }
  const faceted = await search(server, { query, facets: ["licence", "nothing"], limit: 1, typoTolerance: false });
  const expected = [...counts].map(([value, count]) => ({ value, count }))
    .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : 1));
  assert.deepEqual(faceted.facets, { licence: expected, nothing: [] }, "counts cover more than the one-hit page");
  assert.ok(all.total >= faceted.total);

  const capped = await search(server, { query, facets: ["licence"], facetLimit: 2 });
  assert.equal(capped.facets!.licence!.length, 2);

  const filtered = await search(server, {
    query,
    facets: ["licence"],
    filter: { licence: "GPL-3" },
    typoTolerance: false,
  });
  assert.deepEqual(filtered.facets!.licence, [{ value: "GPL-3", count: counts.get("GPL-3") }]);

  for (const mode of ["fulltext", "vector", "hybrid"]) {
    const pages = [];
    for (let offset = 0; offset < 40; offset += 10) {
      const page = await search(server, {
        query,
        mode,
        sort: [{ field: "paragraph", order: "desc" }, { field: "licence", order: "asc" }],
        include: ["metadata"],
        offset,
        limit: 10,
      });
      pages.push(...page.hits);
    }
    const paragraphs = pages.map((hit) => (hit as unknown as { metadata: { paragraph: number } }).metadata.paragraph);
    assert.deepEqual(paragraphs, [...paragraphs].sort((a, b) => b - a), `${mode}: sorted across pages`);
    const most = Math.max(...docs.map((doc) => doc.metadata.paragraph));
    if (mode !== "fulltext") assert.equal(paragraphs[0], most, `${mode}: every document is a match`);
  }
  const vector = await search(server, { query, mode: "vector", facets: ["licence"] });
  assert.equal(
    vector.facets!.licence!.reduce((sum, { count }) => sum + count, 0),
    docs.length,
    "vector mode counts every document that passes the filter",
  );
  const highlighted = await search(server, { query, mode: "vector", include: ["text", "highlights"], limit: 100 });
  for (const hit of highlighted.hits) {
    for (const word of words(hit)) assert.match(word, /^copyright/);
  }
});

Deno.test("languages: German folds and stems, an unknown one is 400 listing the choices, and it all survives a restart", async () => {
  let server = await startTestServer();
  try {
    await assertJsonError(
      await server.call({ action: "createIndex", indexName: "x", docs: [], options: { language: "klingon" } }),
      400,
      /language.*english.*german/s,
    );
    const docs = [
      { id: "laeufer", text: "Der Läufer läuft jeden Morgen durch den Park.", metadata: { kind: "sport", n: 2 } },
      { id: "haus", text: "Das Haus am See ist groß und hell.", metadata: { kind: "home", n: 1 } },
      { id: "haeuser", text: "Die Häuser der Stadt sind alt.", metadata: { kind: "home", n: 3 } },
    ];
    await server.ok({ action: "createIndex", indexName: "de", docs, options: { language: "german" } });
    const de = (query: string, extra: Record<string, unknown> = {}) =>
      server.ok<Result>({ action: "search", indexName: "de", mode: "fulltext", query, ...extra });
    assert.deepEqual((await de("laufer")).hits.map((hit) => hit.id), ["laeufer"]);
    assert.deepEqual((await de("Hauser", { prefix: false })).hits.map((hit) => hit.id).sort(), ["haeuser", "haus"]);
    assert.equal((await de("der die das")).total > 0, true, "a query of stop words only still searches");
    const searches = () =>
      Promise.all(["laufer", "hauser see", "Stad"].map((query) =>
        de(query, {
          include: ["text", "highlights", "snippet"],
          facets: ["kind"],
          sort: [{ field: "n", order: "asc" }],
        })
      ));
    const before = await searches();
    server = await server.restart();
    const after = await searches();
    const strip = (results: Result[]) => results.map(({ hits, total, facets }) => ({ hits, total, facets }));
    assert.deepEqual(strip(after), strip(before));
    const view = await server.ok<{ language: string }>({ action: "getIndex", indexName: "de" });
    assert.equal(view.language, "german");
  } finally {
    await server.close();
  }
});

Deno.test("search validation names the field: include, facets, facetLimit, sort", async () => {
  await using server = await startTestServer();
  await server.ok({ action: "createIndex", indexName: "licences", docs: [{ id: "a", text: "alpha" }] });
  const bad = async (extra: Record<string, unknown>, pattern: RegExp) =>
    await assertJsonError(
      await server.call({ action: "search", indexName: "licences", query: "alpha", ...extra }),
      400,
      pattern,
    );
  await bad({ include: ["text", "colour"] }, /include/);
  await bad({ facets: "licence" }, /facets/);
  await bad({ facets: [42] }, /facets/);
  await bad({ facetLimit: 0 }, /facetLimit/);
  await bad({ sort: [{ field: "n", order: "up" }] }, /sort.*order/);
  await bad({ sort: [{ field: { a: 1 }, order: "asc" }] }, /sort.*field/);
  await bad({ typoTolerance: "yes" }, /typoTolerance/);
  await bad({ prefix: 1 }, /prefix/);
});
