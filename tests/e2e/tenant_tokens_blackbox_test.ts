/**
 * Tenant tokens (issue 42), checked as an application would use them: a public key registered with `createKey`, JWTs
 * minted in the test with WebCrypto (EdDSA over Ed25519, ES256 over P-256) and sent as `authorization: Bearer`, over
 * HTTP only. A token sees only its tenant's documents, whatever the request asks, and a forged, expired or widened one
 * is refused.
 */
import assert from "node:assert/strict";
import { startTestServer } from "../_helpers.ts";
import { expect200, expectError, type Json, post } from "../_keys_client.ts";

interface KeyView {
  keyId: string;
  key?: string;
  actions: string[];
  indexes: string[];
  publicKey?: JsonWebKey;
}
interface SearchResult {
  hits: { id: string; metadata?: Json }[];
  total: number;
  facets?: Record<string, { value: unknown; count: number }[]>;
}
type Alg = "EdDSA" | "ES256";
interface Signer {
  alg: Alg;
  privateKey: CryptoKey;
  /** The public key as registered: only the JWK members that define it. */
  publicJwk: JsonWebKey;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const encoder = new TextEncoder();
const base64url = (bytes: Uint8Array) =>
  btoa(Array.from(bytes, (byte) => String.fromCharCode(byte)).join("")).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
const encodeJson = (value: unknown) => base64url(encoder.encode(JSON.stringify(value)));
const now = () => Math.floor(Date.now() / 1000);

async function newSigner(alg: Alg): Promise<Signer> {
  const pair = alg === "EdDSA"
    ? await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]) as CryptoKeyPair
    : await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
  const jwk = await crypto.subtle.exportKey("jwk", pair.publicKey);
  const publicJwk = alg === "EdDSA"
    ? { kty: jwk.kty, crv: jwk.crv, x: jwk.x }
    : { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y };
  return { alg, privateKey: pair.privateKey, publicJwk };
}

/** A JWT over `header` and `claims`, signed by `signer` (for ES256, WebCrypto's r||s is the JWS form already). */
async function sign(signer: Signer, header: Json, claims: Json): Promise<string> {
  const input = `${encodeJson(header)}.${encodeJson(claims)}`;
  const algorithm = signer.alg === "EdDSA" ? { name: "Ed25519" } : { name: "ECDSA", hash: "SHA-256" };
  const signature = await crypto.subtle.sign(algorithm, signer.privateKey, encoder.encode(input));
  return `${input}.${base64url(new Uint8Array(signature))}`;
}

/** A token of `signer` for `kid`, valid for ten minutes unless `claims` say otherwise. */
function token(signer: Signer, kid: string, claims: Json): Promise<string> {
  return sign(signer, { alg: signer.alg, typ: "JWT", kid }, { exp: now() + 600, ...claims });
}

const sortedIds = (items: { id: string }[]) => items.map((item) => item.id).sort();

/** Documents of three tenants and one of none, all holding the word "lantern". */
const NOTES = [
  { id: "a1", text: "lantern by the river", metadata: { tenant: "a" } },
  { id: "a2", text: "lantern in the forest", metadata: { tenant: "a" } },
  { id: "b1", text: "lantern on the train", metadata: { tenant: "b" } },
  { id: "b2", text: "lantern in the storm", metadata: { tenant: "b" } },
  { id: "c1", text: "lantern of science", metadata: { tenant: "c" } },
  { id: "n1", text: "lantern of nobody" },
];
const TENANT_A = ["a1", "a2"];
const FILTER_A = { tenant: { $eq: "a" } };

Deno.test("tenant tokens: registered public keys, filtered reads, and every forged or widened token refused", async (t) => {
  await using server = await startTestServer();
  const admin = (body: Json) => post(server.url, body, { "x-project-key": server.key });
  const bearer = <T = Json>(jwt: string, body: Json) => post<T>(server.url, body, { authorization: `Bearer ${jwt}` });
  const wait = { wait: true };
  expect200(await admin({ action: "createIndex", indexName: "notes", docs: NOTES, options: wait }), "createIndex");
  const shared = [{ id: "s1", text: "lantern for all" }, { id: "s2", text: "lantern for everyone" }];
  expect200(await admin({ action: "createIndex", indexName: "shared", docs: shared, options: wait }), "createIndex");
  const secret = [{ id: "x1", text: "lantern hidden away" }];
  expect200(await admin({ action: "createIndex", indexName: "private", docs: secret, options: wait }), "createIndex");

  const ed = await newSigner("EdDSA");
  const es = await newSigner("ES256");
  const edScope = {
    actions: ["search", "getDocs", "getIndex", "listIndexes", "addDocs"],
    indexes: ["notes", "shared"],
  };
  const edKey = expect200(
    await admin({ action: "createKey", description: "browser", publicKey: ed.publicJwk, ...edScope }),
    "createKey with an Ed25519 public key",
  ) as unknown as KeyView;
  const esKey = expect200(
    await admin({ action: "createKey", publicKey: es.publicJwk }),
    "createKey with a P-256 public key",
  ) as unknown as KeyView;
  const search = (indexName: string, extra: Json = {}) => ({
    action: "search",
    indexName,
    query: "lantern",
    mode: "fulltext",
    limit: 100,
    ...extra,
  });
  const notesToken = await token(ed, edKey.keyId, { indexes: { notes: { filter: FILTER_A }, shared: {} } });

  await t.step("createKey with a publicKey answers no secret and lists the public key", async () => {
    for (const [view, signer] of [[edKey, ed], [esKey, es]] as const) {
      assert.equal("key" in view, false, `no secret for a public key: ${JSON.stringify(view)}`);
      assert.equal(view.publicKey?.kty, signer.publicJwk.kty);
      assert.equal(view.publicKey?.crv, signer.publicJwk.crv);
      assert.equal(view.publicKey?.x, signer.publicJwk.x);
    }
    assert.deepEqual(edKey.actions, edScope.actions);
    assert.deepEqual(edKey.indexes, edScope.indexes);
    assert.deepEqual([esKey.actions, esKey.indexes], [["*"], ["*"]]);
    const listed = expect200(await admin({ action: "listKeys" }), "listKeys") as unknown as KeyView[];
    for (const view of [edKey, esKey]) {
      const item = listed.find((entry) => entry.keyId === view.keyId);
      assert.ok(item !== undefined && !("key" in item), `listKeys lists ${view.keyId}: ${JSON.stringify(listed)}`);
    }
  });

  await t.step("an EdDSA token searches only its tenant's documents, whatever filter the request adds", async () => {
    for (
      const [what, extra] of [
        ["no filter", {}],
        ["a filter that widens with $or", { filter: { $or: [{ tenant: "b" }, { tenant: "a" }] } }],
        ["a filter on an absent field", { filter: { $or: [{ tenant: { $exists: false } }, { tenant: "a" }] } }],
      ] as const
    ) {
      const found = expect200(await bearer<SearchResult>(notesToken, search("notes", extra)), what);
      assert.deepEqual(sortedIds(found.hits), TENANT_A, `search with ${what}`);
      assert.equal(found.total, TENANT_A.length, `the total of a search with ${what}`);
    }
    for (const filter of [{ tenant: "b" }, { tenant: { $ne: "a" } }]) {
      const found = expect200(await bearer<SearchResult>(notesToken, search("notes", { filter })), "search");
      assert.deepEqual([found.hits, found.total], [[], 0], `the filter ${JSON.stringify(filter)} finds nothing`);
    }
    const faceted = await bearer<SearchResult>(notesToken, search("notes", { facets: ["tenant"] }));
    assert.deepEqual(expect200(faceted, "facets").facets?.tenant, [{ value: "a", count: 2 }], "facets count tenant a");
    for (const mode of ["vector", "hybrid"]) {
      const found = expect200(await bearer<SearchResult>(notesToken, search("notes", { mode })), mode);
      assert.ok(found.hits.length > 0, `${mode} finds something`);
      assert.ok(found.hits.every((hit) => TENANT_A.includes(hit.id)), `${mode}: ${JSON.stringify(found.hits)}`);
    }
    const docs = expect200(await bearer<{ id: string }[]>(notesToken, { action: "getDocs", indexName: "notes" }), "");
    assert.deepEqual(sortedIds(docs), TENANT_A, "getDocs returns only tenant a");
    const asked = { action: "getDocs", indexName: "notes", options: { docIds: ["b1", "a2", "c1", "n1"] } };
    assert.deepEqual(sortedIds(expect200(await bearer<{ id: string }[]>(notesToken, asked), "getDocs")), ["a2"]);
    expect200(await bearer(notesToken, { action: "getIndex", indexName: "notes" }), "getIndex");
    const listed = expect200(await bearer<{ name: string }[]>(notesToken, { action: "listIndexes" }), "listIndexes");
    assert.deepEqual(listed.map((view) => view.name).sort(), ["notes", "shared"], "listIndexes shows the scope only");
    const all = expect200(await bearer<SearchResult>(notesToken, search("shared")), "search shared");
    assert.deepEqual(sortedIds(all.hits), ["s1", "s2"], "an index without a filter in the token shows everything");
  });

  await t.step("a token with a filter only reads, on every index: a write is 403 even where it has none", async () => {
    const writer = await token(ed, edKey.keyId, {
      indexes: { notes: { filter: FILTER_A }, shared: {} },
      actions: ["search", "getDocs", "getIndex", "listIndexes", "addDocs"],
    });
    const planted = [{ id: "p1", text: "lantern planted", metadata: { tenant: "a" } }];
    for (
      const body of [
        { action: "addDocs", indexName: "notes", docs: planted },
        { action: "deleteDocs", indexName: "notes", docIds: ["a1"] },
        { action: "deleteIndex", indexName: "notes" },
        { action: "exportIndex", indexName: "notes" },
      ]
    ) {
      expectError(await bearer(writer, body), 403, `${body.action} on a filtered index`, new RegExp(body.action));
    }
    const added = await bearer(writer, { action: "addDocs", indexName: "shared", docs: [{ id: "s3", text: "new" }] });
    expectError(added, 403, "addDocs on an unfiltered index beside a filtered one", /addDocs/);
    const stored = expect200(await admin({ action: "getDocs", indexName: "notes" }), "") as unknown as Json[];
    assert.equal(stored.length, NOTES.length, "notes is unchanged");
    const searchOnly = await token(ed, edKey.keyId, { indexes: { notes: { filter: FILTER_A } }, actions: ["search"] });
    expect200(await bearer(searchOnly, search("notes")), "search with a search-only token");
    const getDocs = { action: "getDocs", indexName: "notes" };
    expectError(await bearer(searchOnly, getDocs), 403, "getDocs with a search-only token", /getDocs/);
  });

  await t.step("an index outside the token's indexes is 403, the same whether it exists or not", async () => {
    const narrow = await token(ed, edKey.keyId, { indexes: { notes: { filter: FILTER_A } } });
    for (const jwt of [narrow, notesToken]) {
      const existing = await bearer(jwt, search("private"));
      expectError(existing, 403, "search of an index outside the token", /private/);
      const nowhere = await bearer(jwt, search("nowhere"));
      expectError(nowhere, 403, "search of an index that does not exist", /nowhere/);
      assert.equal(existing.text.replaceAll("private", "nowhere"), nowhere.text);
    }
    expectError(await bearer(narrow, search("shared")), 403, "an index the key allows but the token does not");
  });

  await t.step(
    "tampered, wrongly signed, expired, exp-less, unknown-kid, alg none and mismatched tokens: 403",
    async () => {
      const [header, , signature] = notesToken.split(".");
      const widened = encodeJson({ exp: now() + 600, indexes: { notes: {}, shared: {} } });
      const flipped = signature!.slice(0, 10) + (signature![10] === "A" ? "B" : "A") + signature!.slice(11);
      const stranger = await newSigner("EdDSA");
      const claims = { indexes: { notes: { filter: FILTER_A } } };
      const secretKey = expect200(await admin({ action: "createKey", actions: ["search"] }), "") as unknown as KeyView;
      const unsigned = `${encodeJson({ alg: "none", typ: "JWT", kid: edKey.keyId })}.${
        encodeJson({ ...claims, exp: now() + 600 })
      }`;
      const forged: [string, string][] = [
        ["a tampered payload", `${header}.${widened}.${signature}`],
        ["a changed signature", notesToken.replace(/\.[^.]+$/, `.${flipped}`)],
        ["a wrong signer", await token(stranger, edKey.keyId, claims)],
        ["an expired exp", await token(ed, edKey.keyId, { ...claims, exp: now() - 3600 })],
        ["no exp", await sign(ed, { alg: "EdDSA", typ: "JWT", kid: edKey.keyId }, claims)],
        ["an unknown kid", await token(ed, "no-such-key", claims)],
        ["the kid of a secret key", await token(ed, secretKey.keyId, claims)],
        ["alg none", `${unsigned}.`],
        ["alg none with a signature", `${unsigned}.${signature}`],
        ["an ES256 signature on an Ed25519 key", await token(es, edKey.keyId, claims)],
        ["an EdDSA signature on a P-256 key", await token(ed, esKey.keyId, claims)],
      ];
      for (const [what, jwt] of forged) {
        expectError(await bearer(jwt, search("notes")), 403, `a token with ${what}`);
      }
      expect200(await bearer(notesToken, search("notes")), "the genuine token still works");
    },
  );

  await t.step("a token whose indexes or actions are wider than its registered key's is 403", async () => {
    for (
      const [what, claims] of [
        ["indexes *", { indexes: { "*": {} } }],
        ["an index the key lacks", { indexes: { notes: { filter: FILTER_A }, private: {} } }],
        ["a pattern wider than the key's name", { indexes: { "note*": { filter: FILTER_A } } }],
        ["an action the key lacks", { indexes: { notes: { filter: FILTER_A } }, actions: ["search", "deleteIndex"] }],
      ] as const
    ) {
      expectError(await bearer(await token(ed, edKey.keyId, claims), search("notes")), 403, `a token with ${what}`);
    }
  });

  await t.step("an ES256 token works like an EdDSA one, and deleting its key refuses it", async () => {
    const tenantB = await token(es, esKey.keyId, { indexes: { notes: { filter: { tenant: "b" } } } });
    const found = expect200(await bearer<SearchResult>(tenantB, search("notes")), "search with an ES256 token");
    assert.deepEqual(sortedIds(found.hits), ["b1", "b2"]);
    const docs = expect200(await bearer<{ id: string }[]>(tenantB, { action: "getDocs", indexName: "notes" }), "");
    assert.deepEqual(sortedIds(docs), ["b1", "b2"]);
    assert.equal(expect200(await admin({ action: "deleteKey", keyId: esKey.keyId }), "deleteKey"), true);
    await sleep(400);
    expectError(await bearer(tenantB, search("notes")), 403, "a token of a deleted key");
  });

  await t.step("garbage in the authorization header is 403 or 400, never 5xx", async () => {
    const kid = edKey.keyId;
    const headers = [
      "Bearer",
      "Bearer ",
      "Bearer garbage",
      "Bearer a.b.c",
      "Bearer ..",
      "Bearer ....",
      "Basic dXNlcjpwYXNz",
      `Bearer ${"x".repeat(20_000)}`,
      `Bearer ${notesToken} extra`,
      `bearer ${notesToken.split(".").slice(0, 2).join(".")}`,
      `Bearer ${encodeJson({ alg: "EdDSA", kid })}.${encodeJson("a string")}.AAAA`,
      `Bearer ${encodeJson([1, 2])}.${encodeJson({ exp: now() + 60 })}.AAAA`,
      `Bearer ${encodeJson({ alg: "EdDSA", kid })}.${encodeJson({ exp: "soon", indexes: [] })}.AAAA`,
      `Bearer ${encodeJson({ alg: "RS256", kid })}.${encodeJson({ exp: now() + 60, indexes: {} })}.AAAA`,
      `Bearer ${encodeJson({ alg: "EdDSA", kid: 42 })}.${encodeJson({ exp: now() + 60, indexes: {} })}.!!!`,
      `Bearer ${await token(ed, kid, { indexes: { notes: { filter: { $where: "1" } } } })}`,
      `Bearer ${await token(ed, kid, { indexes: "notes" })}`,
    ];
    for (const authorization of headers) {
      const reply = await post(server.url, search("notes"), { authorization });
      assert.ok(
        reply.status === 403 || reply.status === 400,
        `${authorization.slice(0, 80)}: ${reply.status} ${reply.text.slice(0, 300)}`,
      );
      assert.equal(typeof (reply.body as Json)?.error, "string", reply.text.slice(0, 300));
    }
  });
});
