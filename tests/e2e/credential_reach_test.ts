/**
 * How far a credential reaches, checked as an attacker would over `POST /manage` only: a key's expiry is an instant no
 * later than the year 9999; a tenant token with a filter reaches nothing beyond its reads, and a tenant key never
 * manages keys; `searchAnalytics` is granted only by name and never to a tenant token; each query of a `multiSearch`
 * counts against a key's rate; a tenant token is decoded strictly (no padding, stray bits or whitespace); and an alias
 * in a key's scope does not let the key write to, re-point or delete it when its index lies outside the scope.
 *
 * One in-process server serves every test, so that it starts once (`sharedFixture`).
 */
import assert from "node:assert/strict";
import { startTestServer, type TestServer } from "../_helpers.ts";
import { type Call, caller, expect200, expectError, type Json, post, type Reply, sleep } from "../_keys_client.ts";
import { sharedFixture } from "../_shared_fixture.ts";

interface Quire {
  server: TestServer;
  /** The project key. */
  admin: Call;
}

interface SearchResult {
  hits: { id: string }[];
  total: number;
}

/** Documents of two tenants, all holding the word "lantern". */
const NOTES = [
  { id: "a1", text: "lantern by the river", metadata: { tenant: "a" } },
  { id: "a2", text: "lantern in the forest", metadata: { tenant: "a" } },
  { id: "b1", text: "lantern on the train", metadata: { tenant: "b" } },
];
const PRODUCTS = [
  { id: "p1", text: "a red river lantern" },
  { id: "p2", text: "a blue forest lantern" },
];
const MINE = [{ id: "m1", text: "a lantern of my own" }];
const encoder = new TextEncoder();
const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

const fulltext = (indexName: string) => ({ indexName, query: "lantern", mode: "fulltext", limit: 100 });
const search = (indexName: string) => ({ action: "search", ...fulltext(indexName) });
const sortedIds = (items: { id: string }[]) => items.map((item) => item.id).sort();
const base64url = (bytes: Uint8Array) => bytes.toBase64({ alphabet: "base64url", omitPadding: true });
const part = (value: unknown) => base64url(encoder.encode(JSON.stringify(value)));

/** A test on one server, with its indexes and alias made on first use. */
const test = sharedFixture(async (): Promise<Quire> => {
  const server = await startTestServer();
  const admin = caller(server.url, server.key);
  const wait = { wait: true };
  for (const [indexName, docs] of [["notes", NOTES], ["products", PRODUCTS], ["public-mine", MINE]] as const) {
    expect200(await admin({ action: "createIndex", indexName, docs, options: wait }), `createIndex ${indexName}`);
  }
  expect200(await admin({ action: "createIndex", indexName: "public-other", docs: [], options: wait }), "");
  expect200(await admin({ action: "setAlias", alias: "public-products", indexName: "products" }), "setAlias");
  return { server, admin };
}, ({ server }) => server.close());

interface TenantKey {
  keyId: string;
  privateKey: CryptoKey;
}

/** `createKey` with a new Ed25519 public key and `scope`: the reply, and the private half to sign tokens with. */
async function registerPublicKey(
  admin: Call,
  scope: Json,
): Promise<{ reply: Reply<{ keyId: string }>; privateKey: CryptoKey }> {
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]) as CryptoKeyPair;
  const { kty, crv, x } = await crypto.subtle.exportKey("jwk", pair.publicKey);
  const reply = await admin<{ keyId: string }>({ action: "createKey", publicKey: { kty, crv, x }, ...scope });
  return { reply, privateKey: pair.privateKey };
}

/** A registered Ed25519 public key of `scope`, with its private half. */
async function tenantKey(admin: Call, scope: Json): Promise<TenantKey> {
  const { reply, privateKey } = await registerPublicKey(admin, scope);
  return { keyId: expect200(reply, `createKey with a public key and ${JSON.stringify(scope)}`).keyId, privateKey };
}

/** A JWT over the header and claims parts as given, signed with `privateKey`. */
async function signParts(privateKey: CryptoKey, header: string, claims: string): Promise<string> {
  const signature = await crypto.subtle.sign("Ed25519", privateKey, encoder.encode(`${header}.${claims}`));
  return `${header}.${claims}.${base64url(new Uint8Array(signature))}`;
}

/** The parts of a token of `key` with `claims`, valid for ten minutes. */
function tokenParts(key: { keyId: string }, claims: Json): [string, string] {
  const exp = Math.floor(Date.now() / 1000) + 600;
  return [part({ alg: "EdDSA", typ: "JWT", kid: key.keyId }), part({ exp, ...claims })];
}

/** A token of `key` with `claims`, valid for ten minutes. */
function token(key: TenantKey, claims: Json): Promise<string> {
  return signParts(key.privateKey, ...tokenParts(key, claims));
}

function bearer(quire: Quire, jwt: string): Call {
  return <T = Json>(body: Json) => post<T>(quire.server.url, body, { authorization: `Bearer ${jwt}` });
}

/** A scoped key's secret, made by the project key. */
async function scopedKey(admin: Call, scope: Json): Promise<string> {
  const created = await admin<{ key: string }>({ action: "createKey", ...scope });
  return expect200(created, `createKey ${JSON.stringify(scope)}`).key;
}

test("createKey refuses an expiry past the year 9999 in UTC, whatever its offset and whoever asks", async ({ server, admin }) => {
  // A year ahead, so that the key making keys is neither expired nor past 9999.
  const ownExpiry = `${new Date().getUTCFullYear() + 1}-01-01T00:00:00Z`;
  const manager = caller(
    server.url,
    await scopedKey(admin, { actions: ["createKey", "search"], expiresAt: ownExpiry }),
  );
  const yearTenThousand = "9999-12-31T23:59:59-00:01";
  expectError(
    await manager({ action: "createKey", actions: ["search"], expiresAt: yearTenThousand }),
    400,
    `a scoped key expiring ${ownExpiry} creates a key expiring ${yearTenThousand} (year 10000 in UTC)`,
    /9999/,
  );
  for (const expiresAt of [yearTenThousand, "9999-12-31T23:00:00-12:00", "9999-12-31T12:00:00-23:59"]) {
    expectError(
      await admin({ action: "createKey", expiresAt }),
      400,
      `the project key creates a key expiring ${expiresAt}`,
      /9999/,
    );
  }
  for (const expiresAt of ["+010000-01-01T00:00:00Z", "10000-01-01T00:00:00Z", "+275760-09-13T00:00:00Z"]) {
    expectError(await admin({ action: "createKey", expiresAt }), 400, `the project key: expiresAt ${expiresAt}`);
  }
  const last = expect200(
    await admin<{ expiresAt: string }>({ action: "createKey", expiresAt: "9999-12-31T23:59:59Z" }),
    "the last second of 9999 is a valid expiry",
  );
  assert.equal(Date.parse(last.expiresAt), Date.UTC(9999, 11, 31, 23, 59, 59));
  const keys = expect200(await admin<{ expiresAt: string | null }[]>({ action: "listKeys" }), "listKeys");
  const beyond = keys.filter(({ expiresAt }) =>
    expiresAt !== null && Date.parse(expiresAt) > Date.parse(last.expiresAt)
  );
  assert.deepEqual(beyond, [], "no key expires after 9999");
});

test("a tenant token with a filter may not list deleted indexes or aliases, and still reads its index", async (quire) => {
  const key = await tenantKey(quire.admin, { actions: ["*"] });
  const tenant = bearer(quire, await token(key, { indexes: { notes: { filter: { tenant: "a" } } } }));
  for (const action of ["listDeletedIndexes", "listAliases"]) {
    expectError(await tenant({ action }), 403, `${action} with a filtered token`, new RegExp(action));
  }
  const found = expect200(await tenant<SearchResult>(search("notes")), "search");
  assert.deepEqual(sortedIds(found.hits), ["a1", "a2"], "search finds tenant a only");
  const multi = await tenant<{ results: SearchResult[] }>({ action: "multiSearch", queries: [fulltext("notes")] });
  assert.deepEqual(sortedIds(expect200(multi, "multiSearch").results[0]?.hits ?? []), ["a1", "a2"]);
  const docs = expect200(await tenant<{ id: string }[]>({ action: "getDocs", indexName: "notes" }), "getDocs");
  assert.deepEqual(sortedIds(docs), ["a1", "a2"], "getDocs returns tenant a only");
  expect200(await tenant({ action: "getIndex", indexName: "notes" }), "getIndex");
  const listed = expect200(await tenant<{ name: string }[]>({ action: "listIndexes" }), "listIndexes");
  assert.deepEqual(listed.map(({ name }) => name), ["notes"], "listIndexes shows the token's index only");
  const click = { action: "recordClick", indexName: "notes", query: "lantern", id: "a1", position: 1 };
  expect200(await tenant(click), "recordClick");
});

test("createKey refuses a public key whose actions name key management", async ({ admin }) => {
  for (const manage of ["createKey", "listKeys", "deleteKey"]) {
    const actions = ["search", manage];
    const { reply } = await registerPublicKey(admin, { actions });
    expectError(reply, 400, `createKey with a publicKey and actions ${JSON.stringify(actions)}`);
  }
});

test("searchAnalytics is refused to a key that does not name it, even one with every action", async (quire) => {
  for (const actions of [["search"], ["*"]]) {
    const key = caller(quire.server.url, await scopedKey(quire.admin, { actions, indexes: ["notes"] }));
    expect200(await key(search("notes")), `search with actions ${JSON.stringify(actions)}`);
    const reply = await key({ action: "searchAnalytics", indexName: "notes" });
    expectError(reply, 403, `searchAnalytics with actions ${JSON.stringify(actions)}`, /searchAnalytics/);
  }
});

test("a key that names searchAnalytics, and the project key, read search analytics", async (quire) => {
  const actions = ["search", "searchAnalytics"];
  const key = caller(quire.server.url, await scopedKey(quire.admin, { actions, indexes: ["notes"] }));
  const report = expect200(await key<{ searches: number }>({ action: "searchAnalytics", indexName: "notes" }), "key");
  assert.equal(typeof report.searches, "number", JSON.stringify(report));
  expect200(await quire.admin({ action: "searchAnalytics", indexName: "notes" }), "the project key");
});

test("a tenant token may not read searchAnalytics, even unfiltered and of a key that names it", async (quire) => {
  for (const actions of [["*"], ["search", "searchAnalytics"]]) {
    const { reply: created, privateKey } = await registerPublicKey(quire.admin, { actions });
    const what = `createKey with a public key and actions ${JSON.stringify(actions)}`;
    // Refusing to register a public key that names searchAnalytics keeps its tokens from reading analytics too.
    if (actions.includes("searchAnalytics") && created.status !== 200) {
      expectError(created, 400, what);
      continue;
    }
    const key = { keyId: expect200(created, what).keyId, privateKey };
    const tenant = bearer(quire, await token(key, { indexes: { "*": {} } }));
    expect200(await tenant(search("notes")), `an unfiltered token of a key with ${JSON.stringify(actions)}`);
    const reply = await tenant({ action: "searchAnalytics", indexName: "notes" });
    expectError(reply, 403, `searchAnalytics with a token of a key with ${JSON.stringify(actions)}`, /searchAnalytics/);
  }
});

test("each query of a multiSearch counts against the key's requestsPerMinute", async (quire) => {
  // Both requests must fall in one UTC minute, the window the rate is counted in.
  const left = 60_000 - Date.now() % 60_000;
  if (left < 5_000) await sleep(left + 100);
  const key = caller(quire.server.url, await scopedKey(quire.admin, { actions: ["search"], requestsPerMinute: 30 }));
  const twenty = { action: "multiSearch", queries: Array.from({ length: 20 }, () => fulltext("notes")) };
  expect200(await key(twenty), "the first multiSearch of 20 queries, 20 of 30");
  const second = await key(twenty);
  expectError(second, 429, "a second multiSearch of 20 queries in the same minute, 40 of 30");
  assert.ok(second.headers.has("retry-after"), "a 429 says when to retry");
});

test("a tenant token that decodes only under a lenient base64url decoder is refused", async (quire, t) => {
  const key = await tenantKey(quire.admin, { actions: ["search"], indexes: ["notes"] });
  const claims = { indexes: { notes: { filter: { tenant: "a" } } } };
  const [header, payload] = tokenParts(key, claims);
  const genuine = await signParts(key.privateKey, header, payload);
  const send = (jwt: string): Promise<Reply> => bearer(quire, jwt)(search("notes"));
  expect200(await send(genuine), "the genuine token");
  const signature = genuine.split(".")[2]!;
  assert.equal(signature.length, 86, "an Ed25519 signature is 86 base64url characters");
  const lastBits = BASE64URL[BASE64URL.indexOf(signature.at(-1)!) ^ 1]!;
  const spaced = `${header.slice(0, 4)} ${header.slice(4)}`;
  // Each variant's parts decode to the genuine parts' bytes under a lenient decoder (a re-signed one, but for its
  // signature): only a strict decoder tells them apart.
  const variants: [string, () => Promise<string>, number][] = [
    ["the signature padded with ==", () => Promise.resolve(`${genuine}==`), 3],
    ["the signature's unused low bits changed", () => Promise.resolve(`${genuine.slice(0, -1)}${lastBits}`), 3],
    ["a space inside the header part, signed as sent", () => signParts(key.privateKey, spaced, payload), 2],
    ["a space inside the signature part", () => Promise.resolve(genuine.replace(/.{40}$/, (end) => ` ${end}`)), 3],
  ];
  const lenient = (jwt: string, parts: number) =>
    jwt.split(".").slice(0, parts).map((text) => Uint8Array.fromBase64(text, { alphabet: "base64url" }));
  for (const [what, make, sameParts] of variants) {
    await t.step(what, async () => {
      const jwt = await make();
      assert.notEqual(jwt, genuine);
      assert.deepEqual(lenient(jwt, sameParts), lenient(genuine, sameParts), `${what} decodes alike when lenient`);
      expectError(await send(jwt), 403, `a token with ${what}`);
    });
  }
  expect200(await send(genuine), "the genuine token still works");
});

test("an alias in a key's scope whose index is not lets the key read through it, never write or re-point it", async ({ server, admin }) => {
  const actions = ["setAlias", "deleteIndex", "addDocs", "search", "getDocs", "deleteAlias", "updateSettings"];
  const key = caller(server.url, await scopedKey(admin, { indexes: ["public-*"], actions }));
  expectError(
    await key({ action: "setAlias", alias: "public-products", indexName: "public-mine" }),
    403,
    "setAlias re-points an alias whose index is outside the scope",
  );
  const planted = [{ id: "p1", text: "planted lantern" }, { id: "p9", text: "planted lantern" }];
  expectError(
    await key({ action: "addDocs", indexName: "public-products", docs: planted }),
    403,
    "addDocs through an alias whose index is outside the scope",
  );
  expectError(
    await key({ action: "updateSettings", indexName: "public-products", settings: { pins: [] } }),
    403,
    "updateSettings through an alias whose index is outside the scope",
  );
  expectError(
    await key({ action: "deleteAlias", alias: "public-products" }),
    403,
    "deleteAlias of an alias whose index is outside the scope",
  );
  const found = expect200(await key<SearchResult>(search("public-products")), "search through the alias");
  assert.deepEqual(sortedIds(found.hits), ["p1", "p2"]);
  const docs = expect200(
    await key<{ id: string }[]>({ action: "getDocs", indexName: "public-products" }),
    "getDocs through the alias",
  );
  assert.deepEqual(sortedIds(docs), ["p1", "p2"]);
  assert.equal(
    expect200(await key({ action: "setAlias", alias: "public-a", indexName: "public-mine" }), "a new alias in scope"),
    true,
  );
  expect200(await key({ action: "setAlias", alias: "public-a", indexName: "public-other" }), "re-pointed in scope");

  const stored = expect200(
    await admin<{ id: string; text: string }[]>({ action: "getDocs", indexName: "products" }),
    "",
  );
  assert.deepEqual(stored.map(({ id, text }) => ({ id, text })).sort((a, b) => a.id.localeCompare(b.id)), PRODUCTS);
  const aliases = expect200(await admin<{ alias: string; indexName: string }[]>({ action: "listAliases" }), "");
  assert.deepEqual(
    aliases.filter(({ alias }) => alias === "public-products" || alias === "public-a")
      .sort((a, b) => a.alias.localeCompare(b.alias)),
    [{ alias: "public-a", indexName: "public-other" }, { alias: "public-products", indexName: "products" }],
  );
});
