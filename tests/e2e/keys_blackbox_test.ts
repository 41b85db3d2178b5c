/**
 * Scoped keys, per-key rate limits and idempotent writes (issue 42), checked as a client would: over HTTP only, against
 * an in-process server. What spans instances, a SIGKILL and a restart is in `keys_instances_test.ts`.
 */
import assert from "node:assert/strict";
import { startTestServer } from "../_helpers.ts";
import {
  caller,
  DOCS,
  expect200,
  expectError,
  ISO,
  type Json,
  type KeyView,
  names,
  pick,
  type Reply,
  SETTLE_MS,
  sleep,
} from "../_keys_client.ts";

Deno.test("createKey answers the key with its defaults, listKeys shows no secret, deleteKey removes it", async () => {
  await using server = await startTestServer();
  const admin = caller(server.url, server.key);
  await server.ok({ action: "createIndex", indexName: "products", docs: DOCS, options: { wait: true } });
  const before = Date.now();
  const plain = expect200(await admin<KeyView>({ action: "createKey" }), "createKey with defaults");
  assert.ok(typeof plain.keyId === "string" && plain.keyId.length > 0, JSON.stringify(plain));
  assert.match(plain.key ?? "", /^qk_/);
  assert.notEqual(plain.key, server.key);
  const defaults = { description: "", actions: ["*"], indexes: ["*"], expiresAt: null, requestsPerMinute: null };
  assert.deepEqual(pick(plain, Object.keys(defaults)), defaults);
  assert.match(plain.createdAt, ISO);
  assert.ok(Math.abs(Date.parse(plain.createdAt) - before) < 60_000, plain.createdAt);

  const scoped = {
    description: "storefront search",
    actions: ["search", "getDocs"],
    indexes: ["products", "faq-*"],
    expiresAt: "2099-01-01T00:00:00Z",
    requestsPerMinute: 600,
  };
  const full = expect200(await admin<KeyView>({ action: "createKey", ...scoped }), "createKey with every field");
  assert.match(full.key ?? "", /^qk_/);
  assert.notEqual(full.key, plain.key);
  assert.notEqual(full.keyId, plain.keyId);
  const shown = ["description", "actions", "indexes", "requestsPerMinute"];
  assert.deepEqual(pick(full, shown), pick(scoped, shown));
  assert.equal(Date.parse(full.expiresAt!), Date.parse(scoped.expiresAt));

  expect200(await caller(server.url, plain.key!)({ action: "listIndexes" }), "the new default key");
  const search = { action: "search", indexName: "products", query: "lantern", mode: "fulltext" };
  expect200(await caller(server.url, full.key!)(search), "the new scoped key");

  const listed = expect200(await admin<KeyView[]>({ action: "listKeys" }), "listKeys");
  assert.ok(Array.isArray(listed), JSON.stringify(listed));
  for (const created of [plain, full]) {
    const view = listed.find((item) => item.keyId === created.keyId);
    assert.ok(view !== undefined, `listKeys lists ${created.keyId}: ${JSON.stringify(listed)}`);
    assert.equal("key" in view, false, `no secret in listKeys: ${JSON.stringify(view)}`);
    const { key: _key, ...shown } = created;
    const { lastUsedAt, ...rest } = view;
    assert.deepEqual(rest, shown);
    assert.ok(lastUsedAt === null || (typeof lastUsedAt === "string" && ISO.test(lastUsedAt)), String(lastUsedAt));
  }
  const listText = JSON.stringify(listed);
  assert.ok(!listText.includes(plain.key!) && !listText.includes(full.key!), "listKeys shows no secret");

  // The secrets are stored only as hashes: no KV entry holds one.
  const decoder = new TextDecoder();
  const replacer = (_: string, value: unknown) =>
    value instanceof Uint8Array
      ? decoder.decode(value)
      : typeof value === "bigint" || value instanceof Deno.KvU64
      ? String(value)
      : value;
  for await (const entry of server.kv.list({ prefix: [] })) {
    const text = JSON.stringify([entry.key, entry.value], replacer) ?? "";
    assert.ok(!text.includes(plain.key!) && !text.includes(full.key!), `a secret is stored at ${String(entry.key)}`);
  }

  assert.equal(expect200(await admin({ action: "deleteKey", keyId: plain.keyId }), "deleteKey"), true);
  await sleep(SETTLE_MS);
  expectError(await caller(server.url, plain.key!)({ action: "listIndexes" }), 403, "a deleted key");
  expect200(await caller(server.url, full.key!)(search), "the other key still works");
  const after = expect200(await admin<KeyView[]>({ action: "listKeys" }), "listKeys after deleteKey");
  assert.deepEqual(after.filter((item) => item.keyId === plain.keyId), [], "the deleted key is not listed");
  expectError(await admin({ action: "deleteKey", keyId: plain.keyId }), 404, "deleteKey of a deleted key");
  expectError(await admin({ action: "deleteKey", keyId: "no-such-key" }), 404, "deleteKey of an unknown keyId");
});

Deno.test("createKey refuses unknown actions and malformed expiresAt; a key whose expiresAt has passed is refused", async () => {
  await using server = await startTestServer();
  const admin = caller(server.url, server.key);
  expectError(await admin({ action: "createKey", actions: ["search", "fly"] }), 400, "an unknown action");
  expectError(await admin({ action: "createKey", expiresAt: "next tuesday" }), 400, "a malformed expiresAt");
  expectError(await admin({ action: "createKey", expiresAt: "2027-13-45T99:00:00Z" }), 400, "an impossible date");
  const past = expect200(
    await admin<KeyView>({ action: "createKey", expiresAt: "2020-01-01T00:00:00Z" }),
    "createKey with a past expiresAt",
  );
  expectError(await caller(server.url, past.key!)({ action: "listIndexes" }), 403, "an expired key");
});

Deno.test("a scoped key may use only its actions on its indexes, and listIndexes shows only those", async () => {
  await using server = await startTestServer();
  const admin = caller(server.url, server.key);
  for (const indexName of ["products", "products-2", "faq", "faq-en", "faq-de", "secret"]) {
    await server.ok({ action: "createIndex", indexName, docs: DOCS, options: { wait: true } });
  }
  const reader = expect200(
    await admin<KeyView>({
      action: "createKey",
      actions: ["search", "getDocs", "getIndex", "listIndexes"],
      indexes: ["products", "faq-*"],
    }),
    "createKey reader",
  );
  const read = caller(server.url, reader.key!);
  const search = (indexName: string) => ({ action: "search", indexName, query: "lantern", mode: "fulltext" });
  for (const indexName of ["products", "faq-en", "faq-de"]) {
    assert.equal(expect200(await read<{ total: number }>(search(indexName)), `search ${indexName}`).total, 2);
    expect200(await read({ action: "getDocs", indexName }), `getDocs ${indexName}`);
    expect200(await read({ action: "getIndex", indexName }), `getIndex ${indexName}`);
  }
  const listed = expect200(await read<{ name: string }[]>({ action: "listIndexes" }), "listIndexes");
  assert.deepEqual(names(listed), ["faq-de", "faq-en", "products"]);

  // Out of scope: the index is named, and whether it exists shows nowhere.
  for (const body of [search("x"), { action: "getDocs", indexName: "x" }, { action: "getIndex", indexName: "x" }]) {
    for (const indexName of ["secret", "products-2", "faq"]) {
      const existing = await read({ ...body, indexName });
      expectError(existing, 403, `${body.action} ${indexName}`, new RegExp(indexName));
      const nowhere = await read({ ...body, indexName: "nowhere" });
      expectError(nowhere, 403, `${body.action} nowhere`, /nowhere/);
      assert.equal(existing.text.replaceAll(indexName, "nowhere"), nowhere.text, `${body.action} ${indexName}`);
    }
  }
  // Actions out of scope are refused by name, on indexes in scope too.
  const refused: Json[] = [
    { action: "addDocs", indexName: "products", docs: [{ id: "x", text: "planted" }] },
    { action: "deleteDocs", indexName: "products", docIds: ["p1"] },
    { action: "deleteIndex", indexName: "products" },
    { action: "createIndex", indexName: "faq-fr", docs: [] },
    { action: "reembedIndex", indexName: "faq-en" },
    { action: "exportIndex", indexName: "faq-en" },
    { action: "createKey", actions: ["search"], indexes: ["products"] },
    { action: "listKeys" },
    { action: "deleteKey", keyId: reader.keyId },
  ];
  for (const body of refused) {
    expectError(await read(body), 403, `${body.action} by a reader`, new RegExp(body.action as string));
  }
  const docs = expect200(await admin<unknown[]>({ action: "getDocs", indexName: "products" }), "getDocs");
  assert.equal(docs.length, 2, "products is unchanged");
  expectError(await admin({ action: "getIndex", indexName: "faq-fr" }), 404, "faq-fr was not created");

  // actions ["*"]: every action but key management, on its indexes only.
  const writer = expect200(await admin<KeyView>({ action: "createKey", indexes: ["tmp-*"] }), "createKey writer");
  const write = caller(server.url, writer.key!);
  expect200(await write({ action: "createIndex", indexName: "tmp-1", docs: DOCS, options: { wait: true } }), "create");
  expect200(await write({ action: "createIndex", indexName: "tmp-2", docs: DOCS, options: { wait: true } }), "create");
  expect200(await write({ action: "addDocs", indexName: "tmp-1", docs: [{ id: "p3", text: "more" }] }), "addDocs");
  expect200(await write({ action: "deleteDocs", indexName: "tmp-1", docIds: ["p3"] }), "deleteDocs");
  expect200(await write(search("tmp-1")), "search tmp-1");
  assert.equal(expect200(await write({ action: "deleteIndex", indexName: "tmp-1" }), "deleteIndex"), true);
  const other = { action: "createIndex", indexName: "other", docs: [] };
  expectError(await write(other), 403, "createIndex out of scope", /other/);
  expectError(await write({ action: "deleteIndex", indexName: "secret" }), 403, "deleteIndex out of scope", /secret/);
  for (const body of refused.slice(-3)) {
    expectError(await write(body), 403, `${body.action} with actions ["*"]`, new RegExp(body.action as string));
  }
  assert.deepEqual(names(expect200(await write<{ name: string }[]>({ action: "listIndexes" }), "listIndexes")), [
    "tmp-2",
  ]);
});

Deno.test("a key may create only keys with no more rights than its own", async () => {
  await using server = await startTestServer();
  const admin = caller(server.url, server.key);
  await server.ok({ action: "createIndex", indexName: "shop-eu", docs: DOCS, options: { wait: true } });
  const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
  const rights = {
    actions: ["createKey", "listKeys", "deleteKey", "search", "getDocs"],
    indexes: ["shop-*", "blog"],
    expiresAt,
    requestsPerMinute: 100,
  };
  const parent = expect200(await admin<KeyView>({ action: "createKey", ...rights }), "createKey parent");
  const asParent = caller(server.url, parent.key!);
  const narrower = {
    actions: ["search"],
    indexes: ["shop-eu", "blog"],
    expiresAt: new Date(Date.now() + 1_800_000).toISOString(),
    requestsPerMinute: 50,
  };
  const child = expect200(await asParent<KeyView>({ action: "createKey", ...narrower }), "a narrower child");
  const search = { action: "search", indexName: "shop-eu", query: "lantern", mode: "fulltext" };
  expect200(await caller(server.url, child.key!)(search), "the child searches");
  expect200(await asParent({ action: "createKey", ...rights }), "a child with equal rights");
  expect200(await asParent({ action: "createKey", ...narrower, indexes: ["shop-eu-*"] }), "a narrower pattern");
  expect200(await asParent<KeyView[]>({ action: "listKeys" }), "listKeys by the parent");

  const wider: [string, Json][] = [
    ["an action it lacks", { actions: ["search", "addDocs"] }],
    ["default actions", { actions: undefined }],
    ['actions ["*"]', { actions: ["*"] }],
    ["an index it lacks", { indexes: ["shop-eu", "news"] }],
    ["default indexes", { indexes: undefined }],
    ["a wider pattern", { indexes: ["shop*"] }],
    ["a pattern over an exact name", { indexes: ["blog*"] }],
    ["a later expiresAt", { expiresAt: new Date(Date.parse(expiresAt) + 60_000).toISOString() }],
    ["no expiresAt", { expiresAt: undefined }],
    ["a higher rate", { requestsPerMinute: 101 }],
    ["no rate", { requestsPerMinute: undefined }],
  ];
  for (const [what, change] of wider) {
    expectError(await asParent({ action: "createKey", ...narrower, ...change }), 403, `a child with ${what}`);
  }
  const asChild = caller(server.url, child.key!);
  expectError(await asChild({ action: "createKey", ...narrower }), 403, "createKey by a key without it", /createKey/);
  assert.equal(expect200(await asParent({ action: "deleteKey", keyId: child.keyId }), "deleteKey by the parent"), true);
});

Deno.test("Idempotency-Key: a repeated write answers the first answer again, marked replayed, and changes nothing", async () => {
  await using server = await startTestServer();
  const admin = caller(server.url, server.key);
  const once = async (body: Json, key: string, what: string) => {
    const first = await admin(body, { "idempotency-key": key });
    assert.notEqual(first.headers.get("idempotent-replayed"), "true", `${what}: the first answer is no replay`);
    return first;
  };
  const replay = async (body: Json, key: string, first: Reply<unknown>, what: string) => {
    const again = await admin(body, { "idempotency-key": key });
    assert.equal(again.status, first.status, `${what} replayed: ${again.text}`);
    assert.equal(again.headers.get("idempotent-replayed"), "true", `${what} replayed`);
    assert.deepEqual(again.body, first.body, `${what} replayed`);
  };
  const docCount = async (indexName: string) =>
    expect200(await admin<{ docCount: number }>({ action: "getIndex", indexName }), "getIndex").docCount;

  const create = { action: "createIndex", indexName: "idem", docs: DOCS, options: { wait: true } };
  const created = await once(create, "create-1", "createIndex");
  assert.equal(expect200(created, "createIndex"), true);
  await replay(create, "create-1", created, "createIndex");
  expectError(await admin(create), 409, "createIndex again without the key");

  const add = { action: "addDocs", indexName: "idem", docs: [{ id: "a1", text: "one" }, { id: "a2", text: "two" }] };
  const added = await once(add, "add-1", "addDocs");
  assert.deepEqual(expect200(added, "addDocs"), { added: 2, updated: 0 });
  // Had the replay run again, it would bring a1 back.
  expect200(await admin({ action: "deleteDocs", indexName: "idem", docIds: ["a1"] }), "deleteDocs");
  await replay(add, "add-1", added, "addDocs");
  assert.equal(await docCount("idem"), 3, "the addDocs replay added nothing");
  const left = expect200(await admin<{ id: string }[]>({ action: "getDocs", indexName: "idem" }), "getDocs");
  assert.deepEqual(left.map((doc) => doc.id).sort(), ["a2", "p1", "p2"]);

  const remove = { action: "deleteDocs", indexName: "idem", docIds: ["a2"] };
  const removed = await once(remove, "delete-docs-1", "deleteDocs");
  assert.deepEqual(expect200(removed, "deleteDocs"), { deleted: 1 });
  await replay(remove, "delete-docs-1", removed, "deleteDocs");

  const createKey = { action: "createKey", description: "once", actions: ["search"] };
  const keyed = await once(createKey, "key-1", "createKey");
  const secret = (expect200(keyed, "createKey") as unknown as KeyView).key;
  await replay(createKey, "key-1", keyed, "createKey");
  const keys = expect200(await admin<KeyView[]>({ action: "listKeys" }), "listKeys");
  assert.equal(keys.filter((key) => key.description === "once").length, 1, "the createKey replay made no key");
  assert.match(secret ?? "", /^qk_/);

  const deleteKey = { action: "deleteKey", keyId: (keyed.body as unknown as KeyView).keyId };
  const keyDeleted = await once(deleteKey, "key-2", "deleteKey");
  assert.equal(expect200(keyDeleted, "deleteKey"), true);
  await replay(deleteKey, "key-2", keyDeleted, "deleteKey");

  const drop = { action: "deleteIndex", indexName: "idem" };
  const dropped = await once(drop, "drop-1", "deleteIndex");
  assert.equal(expect200(dropped, "deleteIndex"), true);
  await replay(drop, "drop-1", dropped, "deleteIndex");
  expectError(await admin(drop), 404, "deleteIndex again without the key");

  // The boundary: 255 printable characters are a valid key.
  const long = "~".repeat(255);
  const made = await once({ ...create, indexName: "long" }, long, "createIndex with a 255-character key");
  expect200(made, "createIndex with a 255-character key");
  await replay({ ...create, indexName: "long" }, long, made, "createIndex with a 255-character key");
});

Deno.test("Idempotency-Key: another body is 422, a malformed key is 400, and a read ignores it", async () => {
  await using server = await startTestServer();
  const admin = caller(server.url, server.key);
  await server.ok({ action: "createIndex", indexName: "idem", docs: DOCS, options: { wait: true } });
  const k1 = { "idempotency-key": "k-1" };
  const add = { action: "addDocs", indexName: "idem", docs: [{ id: "a1", text: "one" }] };
  expect200(await admin(add, k1), "addDocs");
  const other = { ...add, docs: [{ id: "a1", text: "another text" }] };
  expectError(await admin(other, k1), 422, "the same key with another body");
  const remove = { action: "deleteDocs", indexName: "idem", docIds: ["a1"] };
  expectError(await admin(remove, k1), 422, "the same key on another action");
  const getA1 = { action: "getDocs", indexName: "idem", options: { docIds: ["a1"] } };
  assert.equal(expect200(await admin<{ text: string }[]>(getA1), "getDocs")[0]?.text, "one", "a 422 changes nothing");

  const fresh = { ...add, docs: [{ id: "bad", text: "never added" }] };
  for (const key of ["", "a".repeat(256), "tab\there", "\u00e9t\u00e9"]) {
    expectError(await admin(fresh, { "idempotency-key": key }), 400, `Idempotency-Key ${JSON.stringify(key)}`);
  }
  const docs = expect200(await admin<unknown[]>({ action: "getDocs", indexName: "idem" }), "getDocs");
  assert.equal(docs.length, 3, "no 400 wrote anything");

  // On reads the key is ignored: neither 422 for another body nor a replay.
  for (
    const body of [
      { action: "getIndex", indexName: "idem" },
      ...["lantern", "river", "one"].map((query) => ({
        action: "search",
        indexName: "idem",
        query,
        mode: "fulltext",
      })),
    ]
  ) {
    const read = await admin(body, k1);
    expect200(read, `${body.action} with a used Idempotency-Key`);
    assert.notEqual(read.headers.get("idempotent-replayed"), "true", "a read is never a replay");
  }
});

Deno.test("Idempotency-Key: a repeat while the first request still runs is 409 with Retry-After", async () => {
  await using server = await startTestServer();
  const admin = caller(server.url, server.key);
  const docs = Array.from({ length: 4000 }, (_, i) => ({
    id: `d${i}`,
    text: `${i} a long text about rivers forests lanterns storms and trains `.repeat(3),
  }));
  const create = { action: "createIndex", indexName: "slow", docs, options: { wait: true } };
  const headers = { "idempotency-key": "slow-1" };
  let firstAnswered = false;
  const first = admin(create, headers).then((reply) => (firstAnswered = true, reply));
  await sleep(300);
  const repeat = await admin(create, headers);
  const whileRunning = !firstAnswered;
  const answer = await first;
  assert.equal(expect200(answer, "the first createIndex"), true);
  assert.ok(whileRunning, "the test needs the first createIndex to take longer than the repeat");
  expectError(repeat, 409, "a repeat while the first runs");
  assert.match(repeat.headers.get("retry-after") ?? "", /^\d+$/, "409 has Retry-After in seconds");
  const replayed = await admin(create, headers);
  assert.equal(expect200(replayed, "a repeat after the first answered"), true);
  assert.equal(replayed.headers.get("idempotent-replayed"), "true");
});
