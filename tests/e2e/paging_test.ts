/** End-to-end: `getDocs` and `listIndexes` page with `options.limit` + `options.cursor` and stream whole listings. */
import assert from "node:assert/strict";
import { assertJsonError, startTestServer } from "../_helpers.ts";

Deno.test("getDocs pages through an index with limit and the x-next-cursor header", async () => {
  await using server = await startTestServer();
  const docs = Array.from({ length: 23 }, (_, i) => ({ id: `d${String(i).padStart(2, "0")}`, text: `text ${i}` }));
  docs.push({ id: "é-unicode", text: "after the ascii ids" });
  await server.ok({ action: "createIndex", indexName: "paged", docs: docs.slice(0, 12) });
  await server.ok({ action: "addDocs", indexName: "paged", docs: docs.slice(12) });
  const all = await server.ok<{ id: string }[]>({ action: "getDocs", indexName: "paged" });
  assert.deepEqual(all, docs, "the whole listing, streamed, in id order");

  const paged: unknown[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const response = await server.call({ action: "getDocs", indexName: "paged", options: { limit: 5, cursor } });
    assert.equal(response.status, 200);
    const page = await response.json();
    assert.ok(Array.isArray(page) && page.length <= 5);
    paged.push(...page);
    cursor = response.headers.get("x-next-cursor") ?? undefined;
    pages++;
  } while (cursor !== undefined);
  assert.deepEqual(paged, docs);
  assert.equal(pages, 5, "the last page carries no cursor");

  const exact = await server.call({ action: "getDocs", indexName: "paged", options: { limit: 24 } });
  assert.equal(exact.headers.get("x-next-cursor"), null, "a page that ends the listing has no cursor");
  assert.equal((await exact.json()).length, 24);
  const rest = await server.call({ action: "getDocs", indexName: "paged", options: { cursor: btoa("d20") } });
  assert.deepEqual((await rest.json()).map((doc: { id: string }) => doc.id), ["d21", "d22", "é-unicode"]);
});

Deno.test("paging options are validated", async (t) => {
  await using server = await startTestServer({ env: { MAX_DOCS_PER_REQUEST: "50" } });
  await server.ok({ action: "createIndex", indexName: "i", docs: [{ id: "a", text: "a" }] });
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["limit 0", { action: "getDocs", indexName: "i", options: { limit: 0 } }, /"options\.limit"/],
    ["limit over the maximum", { action: "listIndexes", options: { limit: 51 } }, /"options\.limit"/],
    ["a fractional limit", { action: "getDocs", indexName: "i", options: { limit: 1.5 } }, /"options\.limit"/],
    ["a cursor that is not ours", { action: "getDocs", indexName: "i", options: { cursor: "%%%" } }, /cursor/],
    ["a cursor that is not a string", { action: "listIndexes", options: { cursor: 7 } }, /"options\.cursor"/],
    [
      "docIds with a limit",
      { action: "getDocs", indexName: "i", options: { docIds: ["a"], limit: 1 } },
      /"docIds" cannot be combined/,
    ],
  ];
  for (const [name, body, pattern] of cases) {
    await t.step(name, async () => {
      await assertJsonError(await server.call(body), 400, pattern);
    });
  }
});

Deno.test("listIndexes pages by name", async () => {
  await using server = await startTestServer();
  const names = ["b", "a", "c", "e", "d"];
  for (const name of names) await server.ok({ action: "createIndex", indexName: name, docs: [] });
  const first = await server.call({ action: "listIndexes", options: { limit: 2 } });
  assert.deepEqual((await first.json()).map((index: { name: string }) => index.name), ["a", "b"]);
  const cursor = first.headers.get("x-next-cursor")!;
  const second = await server.call({ action: "listIndexes", options: { limit: 3, cursor } });
  assert.deepEqual((await second.json()).map((index: { name: string }) => index.name), ["c", "d", "e"]);
  assert.equal(second.headers.get("x-next-cursor"), null);
  assert.equal((await server.ok<unknown[]>({ action: "listIndexes" })).length, 5);
});
