/**
 * Hostile credentials: generated `x-project-key`, `authorization` and `Idempotency-Key` headers, and tenant tokens
 * whose header, claims and signature are random, forged from a real one, or signed by the registered key with hostile
 * claims. Whatever arrives, the answer is a JSON 4xx (or a success for a credential that really grants the request),
 * never a 5xx or a stack trace, and a token never reads a document outside its filter.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { startTestServer } from "../_helpers.ts";

const RUNS = Number(Deno.env.get("FUZZ_RUNS") ?? "300");
const encoder = new TextEncoder();

function base64url(bytes: Uint8Array | string): string {
  return (typeof bytes === "string" ? encoder.encode(bytes) : bytes).toBase64({
    alphabet: "base64url",
    omitPadding: true,
  });
}

/** Printable ASCII, as a header value may hold. */
const headerText = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)) });

const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom(null, [], "x", 1e308, -1, { $where: "1" }, { __proto__: { admin: true } }),
);

Deno.test(`${RUNS} generated hostile credentials and tokens get a JSON 4xx or a success, never a 5xx`, async () => {
  await using server = await startTestServer({ env: { PROJECT_MAX_CONCURRENCY: "1000" } });
  const originalWarn = console.warn;
  console.warn = () => {};
  try {
    const docs = [
      { id: "a1", text: "tenant a sofa", metadata: { tenant: "a" } },
      { id: "b1", text: "tenant b sofa", metadata: { tenant: "b" } },
    ];
    await server.ok({ action: "createIndex", indexName: "notes", docs });
    const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]) as CryptoKeyPair;
    const publicKey = await crypto.subtle.exportKey("jwk", pair.publicKey);
    const { keyId } = await server.ok<{ keyId: string }>({ action: "createKey", publicKey, actions: ["search"] });
    const sign = async (header: unknown, claims: unknown) => {
      const signed = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
      const signature = await crypto.subtle.sign("Ed25519", pair.privateKey, encoder.encode(signed));
      return `${signed}.${base64url(new Uint8Array(signature))}`;
    };

    const header = fc.record({
      alg: fc.oneof(fc.constantFrom("EdDSA", "ES256", "none", "HS256", "RS256"), hostileJson),
      kid: fc.oneof(fc.constant(keyId), headerText, hostileJson),
      typ: fc.constantFrom("JWT", undefined),
    }, { requiredKeys: [] });
    const claims = fc.record({
      exp: fc.oneof(fc.constant(Math.floor(Date.now() / 1000) + 600), fc.double(), hostileJson),
      indexes: fc.oneof(
        fc.constant({ notes: { filter: { tenant: "a" } } }),
        fc.dictionary(fc.oneof(headerText, fc.constantFrom("*", "notes", "__proto__")), hostileJson),
        hostileJson,
      ),
      actions: fc.oneof(
        fc.constant(undefined),
        fc.array(fc.oneof(headerText, fc.constantFrom("*", "search"))),
        hostileJson,
      ),
    }, { requiredKeys: [] });
    const good = { exp: Math.floor(Date.now() / 1000) + 600, indexes: { notes: { filter: { tenant: "a" } } } };
    const token = fc.oneof(
      // A good token, with hostile extra claims beside the good ones.
      fc.dictionary(headerText, hostileJson, { maxKeys: 3 }).map((extra) => ({
        sign: [{ alg: "EdDSA", kid: keyId }, { ...extra, ...good }] as const,
      })),
      // Signed by the registered key: only the claims can be wrong.
      fc.tuple(header, claims).map(([h, c]) => ({ sign: [h, c] as const })),
      // Random parts, and real parts in a wrong order or with a random signature.
      fc.tuple(header, claims, fc.uint8Array({ maxLength: 80 })).map(([h, c, signature]) =>
        `${base64url(JSON.stringify(h))}.${base64url(JSON.stringify(c))}.${base64url(signature)}`
      ),
      fc.array(fc.oneof(headerText, fc.base64String()), { maxLength: 5 }).map((parts) => parts.join(".")),
    );
    const credentials = fc.record({
      "x-project-key": fc.oneof(fc.constant(""), fc.constant(""), headerText),
      authorization: fc.oneof(
        token.map((made) => ({ bearer: made })),
        headerText,
        fc.constantFrom("Bearer", "Bearer ", "bearer x.y.z", "Basic dXNlcjpwYXNz"),
      ),
      "idempotency-key": fc.oneof(fc.constant(undefined), headerText, fc.string({ minLength: 250, maxLength: 300 })),
    }, { requiredKeys: [] });
    const body = fc.constantFrom(
      { action: "search", indexName: "notes", query: "sofa", mode: "fulltext" },
      { action: "search", indexName: "notes", query: "sofa", mode: "fulltext", filter: { $or: [{ tenant: "b" }] } },
      { action: "getDocs", indexName: "notes" },
      { action: "addDocs", indexName: "notes", docs: [{ id: "c1", text: "x", metadata: { tenant: "b" } }] },
      { action: "createKey", actions: ["*"] },
      { action: "listIndexes" },
    );

    const statuses = new Map<number, number>();
    const property = fc.asyncProperty(credentials, body, async (made, request) => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(made)) {
        if (value === undefined) continue;
        if (typeof value === "string") headers[name] = value;
        else {
          const bearer = value.bearer;
          headers[name] = `Bearer ${typeof bearer === "string" ? bearer : await sign(bearer.sign[0], bearer.sign[1])}`;
        }
      }
      // Without an x-project-key of its own, a request would go as the project's own key.
      headers["x-project-key"] ??= "";
      const response = await server.call(request, headers);
      const text = await response.text();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      const shown = `${JSON.stringify(headers).slice(0, 300)} ${JSON.stringify(request)}`;
      assert.ok(response.status < 500, `${response.status} for ${shown}: ${text}`);
      if (response.status >= 400) {
        const error = JSON.parse(text);
        assert.equal(typeof error.error, "string");
        assert.doesNotMatch(error.error, /\bat .*\.ts:\d+|node_modules|file:\/\//, "no stack traces or paths");
      } else {
        // Only a token signed by the registered key gets through, and then only within its filter.
        assert.doesNotMatch(text, /"tenant":"b"/, `a success saw tenant b: ${shown}`);
      }
    });
    await fc.assert(property, { numRuns: RUNS, seed: Number(Deno.env.get("FUZZ_SEED") ?? "20261126") });
    const by = [...statuses].sort(([a], [b]) => a - b).map(([status, count]) => `${status}×${count}`).join(" ");
    console.log(`hostile credentials: ${RUNS} cases tried, 0 violations (${by})`);
    assert.ok((statuses.get(403) ?? 0) > RUNS / 2, "mostly refused");
  } finally {
    console.warn = originalWarn;
  }
});
