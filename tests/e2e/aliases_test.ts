/**
 * Aliases: another name of an index, swapped atomically. Every action of an existing index takes the alias, and its
 * answer names the real index; an alias shadows no index and points at no missing one; an aliased index cannot be
 * deleted; keys and tokens may name aliases. Proven under load: four clients on two processes search an alias while it
 * is swapped 20 times, and every answer is a 200 from one of the two indexes, the new one within METADATA_CACHE_MS.
 */
import assert from "node:assert/strict";
import { assertJsonError, startTestServer } from "../_helpers.ts";
import { ok, serverEnvironment, type ServerProcess, startServerProcess } from "../_server_process.ts";

const docsOf = (prefix: string) => [
  { id: `${prefix}1`, text: "a lantern by the river", metadata: { tenant: "a" } },
  { id: `${prefix}2`, text: "a lantern in the forest", metadata: { tenant: "b" } },
];

Deno.test("an alias names its index for every action, and is checked against indexes at each step", async () => {
  await using server = await startTestServer();
  await server.ok({ action: "createIndex", indexName: "shop-1", docs: docsOf("one") });
  await server.ok({ action: "createIndex", indexName: "shop-2", docs: docsOf("two") });
  assert.equal(await server.ok({ action: "setAlias", alias: "shop", indexName: "shop-1" }), true);
  assert.deepEqual(await server.ok({ action: "listAliases" }), [{ alias: "shop", indexName: "shop-1" }]);

  const viaAlias = await server.call({ action: "getIndex", indexName: "shop" });
  assert.equal(viaAlias.headers.get("x-index-name"), "shop-1");
  assert.equal((await viaAlias.json()).name, "shop-1", "the answer names the real index");
  const search = await server.ok<{ hits: { id: string }[] }>({
    action: "search",
    indexName: "shop",
    query: "lantern",
    mode: "fulltext",
  });
  assert.deepEqual(search.hits.map((hit) => hit.id).sort(), ["one1", "one2"]);
  await server.ok({ action: "addDocs", indexName: "shop", docs: [{ id: "one3", text: "a lamp" }] });
  assert.equal((await server.ok<{ docCount: number }>({ action: "getIndex", indexName: "shop-1" })).docCount, 3);
  await server.ok({ action: "deleteDocs", indexName: "shop", docIds: ["one3"] });
  assert.equal((await server.ok<unknown[]>({ action: "getDocs", indexName: "shop" })).length, 2);

  await server.ok({ action: "setAlias", alias: "shop", indexName: "shop-2" });
  const swapped = await server.ok<{ hits: { id: string }[] }>({
    action: "search",
    indexName: "shop",
    query: "lantern",
    mode: "fulltext",
  });
  assert.deepEqual(swapped.hits.map((hit) => hit.id).sort(), ["two1", "two2"], "the swap shows at once here");

  await assertJsonError(await server.call({ action: "setAlias", alias: "shop-1", indexName: "shop-2" }), 409, /shadow/);
  await assertJsonError(await server.call({ action: "setAlias", alias: "x", indexName: "nowhere" }), 404, /nowhere/);
  await assertJsonError(await server.call({ action: "setAlias", alias: "x", indexName: "shop" }), 404, /shop/);
  await assertJsonError(await server.call({ action: "createIndex", indexName: "shop", docs: [] }), 409);
  await assertJsonError(await server.call({ action: "deleteIndex", indexName: "shop-2" }), 409, /alias "shop"/);
  await assertJsonError(await server.call({ action: "deleteIndex", indexName: "shop" }), 409, /alias "shop"/);

  // A key scoped to the alias reaches its index through it, and nothing else.
  const scoped = await server.ok<{ key: string }>({ action: "createKey", actions: ["search"], indexes: ["shop"] });
  const asScoped = { "x-project-key": scoped.key };
  const body = { action: "search", indexName: "shop", query: "lantern", mode: "fulltext" };
  assert.equal((await server.call(body, asScoped)).status, 200);
  await assertJsonError(await server.call({ ...body, indexName: "shop-1" }, asScoped), 403, /index "shop-1"/);

  assert.equal(await server.ok({ action: "deleteAlias", alias: "shop" }), true);
  await assertJsonError(await server.call({ action: "deleteAlias", alias: "shop" }), 404, /shop/);
  await assertJsonError(await server.call({ action: "getIndex", indexName: "shop" }), 404);
  assert.equal(await server.ok({ action: "deleteIndex", indexName: "shop-2" }), true, "no alias points at it now");
});

Deno.test("a tenant token that names an alias gets its filter on the alias's index", async () => {
  await using server = await startTestServer();
  await server.ok({ action: "createIndex", indexName: "notes-1", docs: docsOf("n") });
  await server.ok({ action: "setAlias", alias: "notes", indexName: "notes-1" });
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]) as CryptoKeyPair;
  const publicKey = await crypto.subtle.exportKey("jwk", pair.publicKey);
  const { keyId } = await server.ok<{ keyId: string }>({ action: "createKey", publicKey, indexes: ["notes"] });
  const part = (value: unknown) =>
    new TextEncoder().encode(JSON.stringify(value)).toBase64({ alphabet: "base64url", omitPadding: true });
  const claims = { exp: Math.floor(Date.now() / 1000) + 60, indexes: { notes: { filter: { tenant: "a" } } } };
  const signed = `${part({ alg: "EdDSA", kid: keyId })}.${part(claims)}`;
  const signature = await crypto.subtle.sign("Ed25519", pair.privateKey, new TextEncoder().encode(signed));
  const bearer = {
    "x-project-key": "",
    authorization: `Bearer ${signed}.${
      new Uint8Array(signature).toBase64({ alphabet: "base64url", omitPadding: true })
    }`,
  };
  const response = await server.call(
    { action: "search", indexName: "notes", query: "lantern", mode: "fulltext" },
    bearer,
  );
  const { hits, error } = await response.json();
  assert.equal(response.status, 200, error);
  assert.deepEqual(hits.map((hit: { id: string }) => hit.id), ["n1"], "only tenant a, through the alias");
  const docs = await (await server.call({ action: "getDocs", indexName: "notes" }, bearer)).json();
  assert.deepEqual(docs.map((doc: { id: string }) => doc.id), ["n1"]);
});

Deno.test("four clients on two processes search an alias through 20 swaps: all 200, each from one of the two", async () => {
  const env = { ...await serverEnvironment(), METADATA_CACHE_MS: "250", LOG_REQUESTS: "false" };
  await using a = await startServerProcess(env);
  await using b = await startServerProcess(env, a.key);
  await ok(a, { action: "createIndex", indexName: "blue", docs: docsOf("blue") });
  await ok(a, { action: "createIndex", indexName: "green", docs: docsOf("green") });
  await ok(a, { action: "setAlias", alias: "live", indexName: "blue" });

  const from = (ids: string[]) => ids.every((id) => id.startsWith("blue")) ? "blue" : "green";
  const searchOn = async (server: ServerProcess) => {
    const response = await server.call({ action: "search", indexName: "live", query: "lantern", mode: "fulltext" });
    const body = await response.json();
    assert.equal(response.status, 200, JSON.stringify(body));
    const ids: string[] = body.hits.map((hit: { id: string }) => hit.id);
    assert.ok(ids.length === 2 && ids.every((id) => id.startsWith(ids[0]!.slice(0, 4))), `one index: ${ids}`);
    assert.equal(response.headers.get("x-index-name"), from(ids));
    return from(ids);
  };
  let stop = false;
  let answers = 0;
  const clients = [a, b, a, b].map(async (server) => {
    while (!stop) {
      await searchOn(server);
      answers++;
    }
  });
  let target = "blue";
  for (let swap = 0; swap < 20; swap++) {
    target = target === "blue" ? "green" : "blue";
    await ok(a, { action: "setAlias", alias: "live", indexName: target });
    // Every instance answers from the new index within METADATA_CACHE_MS (250 ms), and from then on.
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const server of [a, b]) assert.equal(await searchOn(server), target, `swap ${swap} on ${server.url}`);
  }
  stop = true;
  await Promise.all(clients);
  console.log(`alias swaps: 20 swaps, ${answers} searches by 4 clients on 2 processes, all 200`);
});

Deno.test("a process killed with SIGKILL while it swaps an alias leaves it whole, on one index or the other", async () => {
  const env = { ...await serverEnvironment(), METADATA_CACHE_MS: "250", LOG_REQUESTS: "false" };
  const first = await startServerProcess(env);
  await using a = first;
  await using b = await startServerProcess(env, first.key);
  await ok(a, { action: "createIndex", indexName: "blue", docs: docsOf("blue") });
  await ok(a, { action: "createIndex", indexName: "green", docs: docsOf("green") });
  await ok(a, { action: "setAlias", alias: "live", indexName: "blue" });
  // Swaps in flight, one after another, until the kill lands in the middle of one.
  const swapping = (async () => {
    for (let swap = 0;; swap++) {
      const response = await a.call({ action: "setAlias", alias: "live", indexName: swap % 2 ? "blue" : "green" })
        .catch(() => null);
      if (response === null) return swap;
      await response.body?.cancel();
    }
  })();
  await new Promise((resolve) => setTimeout(resolve, 300));
  await a.stop("SIGKILL");
  const swaps = await swapping;
  const [alias] = await ok<{ alias: string; indexName: string }[]>(b, { action: "listAliases" });
  assert.ok(alias?.indexName === "blue" || alias?.indexName === "green", JSON.stringify(alias));
  await new Promise((resolve) => setTimeout(resolve, 300));
  const response = await b.call({ action: "search", indexName: "live", query: "lantern", mode: "fulltext" });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("x-index-name"), alias!.indexName);
  await response.body?.cancel();
  console.log(`alias under SIGKILL: killed after ${swaps} swaps, the alias points at "${alias!.indexName}"`);
});
