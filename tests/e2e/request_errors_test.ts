/** End-to-end: the documented order of checks, and a clear JSON error for every bad request. */
import assert from "node:assert/strict";
import { assertJsonError, startTestServer } from "../_helpers.ts";

Deno.test("method, path, content type and body are checked before anything else", async (t) => {
  await using server = await startTestServer();
  const base = server.url.replace("/manage", "");
  await t.step("another path is 404", async () => {
    await assertJsonError(await fetch(`${base}/other`, { method: "POST" }), 404, /Not found/);
  });
  await t.step("GET is 405 with Allow: POST", async () => {
    const response = await fetch(server.url);
    assert.equal(response.headers.get("allow"), "POST");
    await assertJsonError(response, 405);
  });
  await t.step("a body that is not JSON-typed is 415", async () => {
    const response = await fetch(server.url, {
      method: "POST",
      body: "{}",
      headers: { "content-type": "text/plain" },
    });
    await assertJsonError(response, 415, /application\/json/);
  });
  await t.step("content type with a charset is accepted", async () => {
    const response = await server.call({ action: "listIndexes" }, {
      "content-type": "application/json; charset=utf-8",
    });
    assert.equal(response.status, 200);
    await response.body?.cancel();
  });
  await t.step("invalid JSON is 400", async () => {
    await assertJsonError(await server.send("{nope"), 400, /not valid JSON/);
  });
  await t.step("invalid UTF-8 is 400", async () => {
    await assertJsonError(await server.send(new Uint8Array([0x7b, 0xff, 0x7d])), 400, /UTF-8/);
  });
  await t.step("JSON that is not an object is 400", async () => {
    await assertJsonError(await server.send("[1,2]"), 400, /must be a JSON object/);
    await assertJsonError(await server.send("null"), 400, /must be a JSON object/);
  });
});

Deno.test("a body over MAX_BODY_BYTES is 413, also when streamed without a length", async () => {
  await using server = await startTestServer({ env: { MAX_BODY_BYTES: "1000" } });
  const big = JSON.stringify({ projectId: "default", action: "listIndexes", pad: "x".repeat(2000) });
  await assertJsonError(await server.call({ action: "listIndexes", pad: "x".repeat(2000) }), 413, /limit of 1000/);
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(big));
      controller.close();
    },
  });
  await assertJsonError(await server.send(stream), 413);
});

Deno.test("a body cut short, or with broken chunks, is 400 with a JSON error, not a 500", async () => {
  await using server = await startTestServer();
  const { port } = new URL(server.url);
  const head = (framing: string) =>
    `POST /manage HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-service-version: v1\r\n` +
    `x-project-key: ${server.key}\r\n${framing}\r\n\r\n`;
  const cases = [
    head("content-length: 1000") + '{"action":',
    head("transfer-encoding: chunked") + '5\r\n{"act',
    head("transfer-encoding: chunked") + "zz\r\n{}\r\n0\r\n\r\n",
  ];
  for (const request of cases) {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(port) });
    await conn.write(new TextEncoder().encode(request));
    await conn.closeWrite();
    const answer = new TextDecoder().decode(await new Response(conn.readable).arrayBuffer());
    const status = Number(answer.split(" ")[1]);
    assert.ok(status === 400 || answer === "", `a 400 or no answer for ${JSON.stringify(request)}: ${answer}`);
    if (status === 400 && answer.includes("application/json")) assert.match(answer, /"error":/);
  }
});

Deno.test("x-service-version must be v1, and the error says so", async () => {
  await using server = await startTestServer();
  const wrong = await server.call({ action: "listIndexes" }, { "x-service-version": "v2" });
  assert.equal((await assertJsonError(wrong, 400, /x-service-version "v2": use "v1"/)).action, "listIndexes");
  const missing = await fetch(server.url, {
    method: "POST",
    body: JSON.stringify({ action: "listIndexes", projectId: "default" }),
    headers: { "content-type": "application/json", "x-project-key": server.key },
  });
  await assertJsonError(missing, 400, /Missing header "x-service-version"/);
});

Deno.test("projectId is required, an unknown project is 404, a wrong or foreign key is 403", async () => {
  await using server = await startTestServer();
  await assertJsonError(await server.call({ action: "listIndexes", projectId: undefined }), 400, /"projectId"/);
  await assertJsonError(await server.call({ action: "listIndexes", projectId: 42 }), 400, /"projectId"/);
  const unknown = await server.call({ action: "createIndex", projectId: "ghost", indexName: "i", docs: [] });
  assert.equal((await assertJsonError(unknown, 404, /Project "ghost" not found/)).action, "createIndex");
  await assertJsonError(await server.call({ action: "listIndexes" }, { "x-project-key": "qk_wrong" }), 403);
  await assertJsonError(await server.call({ action: "listIndexes" }, { "x-project-key": "" }), 403);
});

Deno.test("credentials are checked before the action is validated", async () => {
  await using server = await startTestServer();
  const response = await server.call({ action: "bogus" }, { "x-project-key": "qk_wrong" });
  await assertJsonError(response, 403);
});

Deno.test("an unknown or missing action is 400, listing the supported ones", async () => {
  await using server = await startTestServer();
  const unknown = await assertJsonError(await server.call({ action: "search-all" }), 400, /Unknown action/);
  assert.match(unknown.error, /"createIndex", "getIndex", "listIndexes", "deleteIndex", "addDocs", "deleteDocs"/);
  assert.equal(unknown.action, "search-all");
  const missing = await assertJsonError(await server.call({}), 400, /Missing required field "action"/);
  assert.equal(missing.action, undefined);
  await assertJsonError(await server.call({ action: "__proto__" }), 400, /Unknown action "__proto__"/);
});

Deno.test("invalid action fields are 400, naming the field and the element", async (t) => {
  await using server = await startTestServer({ env: { MAX_DOCS_PER_REQUEST: "3", MAX_DOC_TEXT_BYTES: "100" } });
  await server.ok({ action: "createIndex", indexName: "i", docs: [] });
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["createIndex without indexName", { action: "createIndex", docs: [] }, /Missing required field "indexName"/],
    ["createIndex without docs", { action: "createIndex", indexName: "n" }, /Missing required field "docs"/],
    ["docs not an array", { action: "createIndex", indexName: "n", docs: {} }, /"docs"/],
    [
      "a doc with a text of numbers",
      { action: "createIndex", indexName: "n", docs: [{ id: "a", text: 7 }] },
      /"docs\[0\]\.text"/,
    ],
    [
      "a vector of strings",
      { action: "createIndex", indexName: "n", docs: [{ id: "a", text: "", vector: ["1"] }] },
      /"docs\[0\]\.vector\[0\]"/,
    ],
    ["a doc without id", { action: "createIndex", indexName: "n", docs: [{ text: "t" }] }, /"docs\[0\]\.id"/],
    ["an empty id", { action: "createIndex", indexName: "n", docs: [{ id: "", text: "t" }] }, /"docs\[0\]\.id"/],
    ["a numeric id", { action: "addDocs", indexName: "i", docs: [{ id: 7, text: "t" }] }, /"docs\[0\]\.id"/],
    [
      "an id with a lone surrogate",
      { action: "addDocs", indexName: "i", docs: [{ id: "ok", text: "t" }, { id: "a\ud800", text: "t" }] },
      /"docs\[1\]\.id": must not contain lone surrogates/,
    ],
    [
      "a text with a lone surrogate",
      { action: "addDocs", indexName: "i", docs: [{ id: "a", text: "\udc00 t" }] },
      /"docs\[0\]\.text": must not contain lone surrogates/,
    ],
    ["an indexName with a lone surrogate", { action: "getIndex", indexName: "\ud83d" }, /"indexName": must not/],
    [
      "metadata that is not an object",
      { action: "addDocs", indexName: "i", docs: [{ id: "a", text: "t" }, { id: "b", text: "t", metadata: [1] }] },
      /"docs\[1\]\.metadata": expected a JSON object/,
    ],
    [
      "duplicate ids",
      { action: "createIndex", indexName: "n", docs: [{ id: "a", text: "1" }, { id: "a", text: "2" }] },
      /"docs\[1\]\.id": duplicate id "a", first at docs\[0\]/,
    ],
    [
      "too many docs",
      { action: "addDocs", indexName: "i", docs: ["a", "b", "c", "d"].map((id) => ({ id, text: id })) },
      /"docs": must hold at most 3 documents/,
    ],
    [
      "a text over the limit",
      { action: "addDocs", indexName: "i", docs: [{ id: "long", text: "x".repeat(101) }] },
      /"docs\[0\]\.text": document "long" has a text of 101 bytes, more than the limit of 100/,
    ],
    [
      "upsert not a boolean",
      { action: "addDocs", indexName: "i", docs: [], options: { upsert: "no" } },
      /options\.upsert/,
    ],
    ["deleteDocs without docIds", { action: "deleteDocs", indexName: "i" }, /Missing required field "docIds"/],
    ["deleteDocs with empty docIds", { action: "deleteDocs", indexName: "i", docIds: [] }, /non-empty array/],
    ["deleteDocs with a numeric id", { action: "deleteDocs", indexName: "i", docIds: ["a", 2] }, /"docIds\[1\]"/],
    ["getDocs with bad docIds", { action: "getDocs", indexName: "i", options: { docIds: "a" } }, /options\.docIds/],
    ["an empty indexName", { action: "getIndex", indexName: "" }, /"indexName"/],
    ["a numeric indexName", { action: "getIndex", indexName: 5 }, /"indexName"/],
    ["modelId not a string", { action: "createIndex", indexName: "n", docs: [], modelId: 3 }, /"modelId"/],
  ];
  for (const [name, body, pattern] of cases) {
    await t.step(name, async () => {
      const error = await assertJsonError(await server.call(body), 400, pattern);
      assert.equal(error.action, body.action);
    });
  }
  await assertJsonError(await server.call({ action: "getIndex", indexName: "n" }), 404, /not found/);
});

Deno.test("metadata with prototype keys is stored and returned as given", async () => {
  await using server = await startTestServer();
  const body = '{"action":"createIndex","projectId":"default","indexName":"p",' +
    '"docs":[{"id":"a","text":"t","metadata":{"__proto__":{"x":1},"constructor":"c"}}]}';
  const response = await server.send(body);
  assert.equal(response.status, 200, await response.text());
  const docs = await server.ok<{ metadata: Record<string, unknown> }[]>({ action: "getDocs", indexName: "p" });
  const metadata = docs[0]!.metadata;
  assert.deepEqual(Object.keys(metadata).sort(), ["__proto__", "constructor"]);
  assert.equal(Object.getPrototypeOf(metadata), Object.prototype);
});
