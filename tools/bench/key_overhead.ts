/**
 * `deno task bench:keys`: what a scoped key, a rate-limited key and a tenant token add to an authorized search. A
 * server process holds 10,000 documents of 12 `wamerican` words in ten tenants; one client sends 2-word full-text
 * searches in turns with each credential, and the median wall time of each (from the client, so that authentication
 * counts) is set against the project key's, all in one run. The token's filter is compared both with the project
 * key's unfiltered search and with the project key sending the same filter in the body.
 *
 *   deno task bench:keys                   # 1,000 searches per credential
 *   deno task bench:keys --searches 200
 */
import { parseArgs } from "node:util";
import type { ServerProcess } from "../../tests/_server_process.ts";
import { line, ok } from "./_bench_helpers.ts";
import { dictionaryWords, quantile } from "./_corpus.ts";
import { clientVectorEnvironment, dictionaryText, startClientVectorServer, vectorOf } from "./_client_vectors.ts";

const { values } = parseArgs({ args: Deno.args, options: { searches: { type: "string", default: "1000" } } });
const SEARCHES = Number(values.searches);
const DOCS = 10_000;
const TENANTS = 10;
const encoder = new TextEncoder();

function base64url(bytes: Uint8Array | string): string {
  return (typeof bytes === "string" ? encoder.encode(bytes) : bytes).toBase64({
    alphabet: "base64url",
    omitPadding: true,
  });
}

/** A tenant token for `keyId`, signed with `privateKey`, whose filter keeps tenant `t1` of the index `bench`. */
async function tenantToken(keyId: string, privateKey: CryptoKey, alg: "EdDSA" | "ES256"): Promise<string> {
  const claims = { exp: Math.floor(Date.now() / 1000) + 3600, indexes: { bench: { filter: { tenant: "t1" } } } };
  const signed = `${base64url(JSON.stringify({ alg, typ: "JWT", kid: keyId }))}.${base64url(JSON.stringify(claims))}`;
  const params = alg === "EdDSA" ? { name: "Ed25519" } : { name: "ECDSA", hash: "SHA-256" };
  return `${signed}.${base64url(new Uint8Array(await crypto.subtle.sign(params, privateKey, encoder.encode(signed))))}`;
}

/** A public key registered for tokens, and the token it verifies. */
async function registeredToken(server: ServerProcess, alg: "EdDSA" | "ES256"): Promise<string> {
  const params = alg === "EdDSA" ? { name: "Ed25519" } : { name: "ECDSA", namedCurve: "P-256" };
  const pair = await crypto.subtle.generateKey(params, true, ["sign", "verify"]) as CryptoKeyPair;
  const publicKey = await crypto.subtle.exportKey("jwk", pair.publicKey);
  const { keyId } = await ok<{ keyId: string }>(server, {
    action: "createKey",
    publicKey,
    actions: ["search"],
    indexes: ["bench"],
  });
  return await tenantToken(keyId, pair.privateKey, alg);
}

const words = await dictionaryWords();
const server = await startClientVectorServer(Deno.cwd(), await clientVectorEnvironment());
try {
  await ok(server, { action: "createIndex", indexName: "bench", modelId: "client-384", docs: [] });
  for (let from = 0; from < DOCS; from += 1_000) {
    const docs = Array.from({ length: 1_000 }, (_, i) => ({
      id: `d${from + i}`,
      text: dictionaryText(words, 7, from + i),
      vector: vectorOf("near-random", from + i),
      metadata: { tenant: `t${(from + i) % TENANTS}` },
    }));
    await ok(server, { action: "addDocs", indexName: "bench", docs });
  }
  const scoped = await ok<{ key: string }>(server, { action: "createKey", actions: ["search"], indexes: ["bench*"] });
  const limited = await ok<{ key: string }>(server, {
    action: "createKey",
    actions: ["search"],
    indexes: ["bench"],
    requestsPerMinute: 1_000_000,
  });
  const credentials: [string, Record<string, string>, Record<string, unknown>][] = [
    ["project key", { "x-project-key": server.key }, {}],
    ["project key + filter", { "x-project-key": server.key }, { filter: { tenant: "t1" } }],
    ["scoped key", { "x-project-key": scoped.key }, {}],
    ["rate-limited key", { "x-project-key": limited.key }, {}],
    ["token EdDSA", { authorization: `Bearer ${await registeredToken(server, "EdDSA")}` }, {}],
    ["token ES256", { authorization: `Bearer ${await registeredToken(server, "ES256")}` }, {}],
  ];
  const samples = credentials.map(() => [] as number[]);
  const queryOf = (i: number) => dictionaryText(words, 11, i).split(" ").slice(0, 2).join(" ");
  // A warm-up of every credential first: the index loads, and each token is verified once.
  for (let i = -50; i < SEARCHES; i++) {
    for (const [c, [, headers, extra]] of credentials.entries()) {
      const body = { action: "search", projectId: "default", indexName: "bench", query: queryOf(i), mode: "fulltext" };
      const started = performance.now();
      const response = await fetch(server.url, {
        method: "POST",
        headers: { "content-type": "application/json", "x-service-version": "v1", ...headers },
        body: JSON.stringify({ ...body, ...extra }),
      });
      await response.text();
      if (response.status !== 200) throw new Error(`${credentials[c]![0]}: ${response.status}`);
      if (i >= 0) samples[c]!.push(performance.now() - started);
    }
  }
  const medians = samples.map((times) => quantile(times, 0.5));
  line("bench:keys", `${SEARCHES} 2-word full-text searches per credential, 10,000 docs, one client, median wall ms`);
  for (const [c, [name]] of credentials.entries()) {
    const ratio = medians[c]! / medians[0]!;
    const filtered = name.startsWith("token")
      ? `, ${(medians[c]! / medians[1]!).toFixed(2)}× project key + filter`
      : "";
    line(name, `${medians[c]!.toFixed(3)} ms, ${ratio.toFixed(2)}× project key${filtered}`);
  }
} finally {
  await server.stop();
}
