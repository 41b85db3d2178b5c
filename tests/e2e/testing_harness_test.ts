/** The test harness `@quire/server/testing` and the portless handler, as a user's test suite would use them. */
import assert from "node:assert/strict";
import { createQuireHandler } from "../../main.ts";
import { startQuire } from "../../src/testing/start_quire.ts";
import { hashEmbedding } from "../../src/embedding/hash_embedding.ts";

const FAQ = [
  { id: "password", text: "Reset your password from the sign-in page", metadata: { topic: "account" } },
  { id: "shipping", text: "Orders ship within two business days", metadata: { topic: "orders" } },
  { id: "refund", text: "Refunds reach your card within a week", metadata: { topic: "orders" } },
];

Deno.test("startQuire serves the real API with a bound client; a query ranks the documents sharing its words first", async () => {
  await using quire = await startQuire();
  assert.match(quire.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  await quire.client.createIndex("faq", FAQ);
  for (const mode of ["vector", "hybrid", "fulltext"] as const) {
    const { hits } = await quire.client.search("faq", "how do I reset my password", { mode });
    assert.equal(hits[0]?.id, "password", mode);
  }
  const refunds = await quire.client.search("faq", "card refunds", { mode: "vector", filter: { topic: "orders" } });
  assert.equal(refunds.hits[0]?.id, "refund");
  const index = await quire.client.getIndex("faq");
  assert.equal(index.docCount, 3);
  assert.deepEqual(index.model, { id: "svc-minilm", version: "hash-384-1" });
  // The plain HTTP API answers too, with the project's key.
  const response = await fetch(`${quire.url}/manage`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-service-version": "v1", "x-project-key": quire.key },
    body: JSON.stringify({ action: "listIndexes", projectId: quire.projectId }),
  });
  assert.equal(response.status, 200);
  assert.deepEqual((await response.json()).map((view: { name: string }) => view.name), ["faq"]);
});

Deno.test("reset() deletes every index and queued job and keeps the project, key, URL and client", async () => {
  await using quire = await startQuire();
  for (let i = 0; i < 10; i++) await quire.client.createIndex(`index-${i}`, FAQ);
  await quire.client.createIndex("queued", FAQ, { wait: false });
  const started = performance.now();
  await quire.reset();
  const took = performance.now() - started;
  assert.deepEqual((await quire.client.listIndexes()).items, []);
  await quire.client.createIndex("faq", FAQ);
  assert.equal((await quire.client.getIndex("faq")).docCount, 3);
  assert.ok(took < 1_000, `reset took ${took.toFixed(0)} ms`);
});

Deno.test("two instances in one process are independent", async () => {
  await using a = await startQuire();
  await using b = await startQuire();
  assert.notEqual(a.url, b.url);
  assert.notEqual(a.key, b.key);
  await a.client.createIndex("faq", FAQ);
  assert.deepEqual((await b.client.listIndexes()).items, []);
  await assert.rejects(
    fetch(`${b.url}/manage`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-service-version": "v1", "x-project-key": a.key },
      body: JSON.stringify({ action: "listIndexes", projectId: b.projectId }),
    }).then(async (response) => {
      await response.body?.cancel();
      if (response.status === 403) throw new Error("refused");
    }),
    /refused/,
  );
});

Deno.test("createQuireHandler answers requests with no port, and rejects settings it does not know", async () => {
  await using quire = await createQuireHandler({
    models: { "svc-minilm": { source: "quire:hash", version: "hash-384-1" } },
    project: { id: "demo", key: "demo-key" },
  });
  const call = (body: Record<string, unknown>) =>
    quire.fetch(
      new Request("http://quire.test/manage", {
        method: "POST",
        headers: { "content-type": "application/json", "x-service-version": "v1", "x-project-key": "demo-key" },
        body: JSON.stringify({ projectId: "demo", ...body }),
      }),
    );
  assert.equal((await call({ action: "createIndex", indexName: "faq", docs: FAQ })).status, 200);
  const search = await call({ action: "search", indexName: "faq", query: "when do orders ship", mode: "vector" });
  assert.equal((await search.json()).hits[0].id, "shipping");
  const health = await quire.fetch(new Request("http://quire.test/healthz"));
  assert.equal(health.status, 200);
  await health.body?.cancel();
  await assert.rejects(createQuireHandler({ settings: { SEARCH_CACHE: "1" } }), /Unknown setting "SEARCH_CACHE"/);
  await assert.rejects(createQuireHandler({ settings: { MAX_BODY_BYTES: "lots" } }), /Invalid MAX_BODY_BYTES/);
});

Deno.test("the hash embedding is deterministic, unit length, and closer for texts that share words", () => {
  const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * b[i]!, 0);
  const query = hashEmbedding("reset password");
  assert.deepEqual(query, hashEmbedding("reset password"));
  assert.ok(Math.abs(cosine(query, query) - 1) < 1e-6);
  assert.ok(cosine(query, hashEmbedding(FAQ[0]!.text)) > cosine(query, hashEmbedding(FAQ[1]!.text)));
  assert.ok(hashEmbedding("").every((value) => value === 0));
});
