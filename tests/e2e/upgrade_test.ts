/**
 * Upgrades open yesterday's store: a store that the code of an earlier commit wrote (kept under `tests/fixtures/`,
 * made by `tools/make_store_fixture.ts`) opens with today's code and serves every document, search and key as it did.
 * A store of a newer format is refused at start, naming both versions, and left as it was.
 *
 * Every later change of the store's format adds a fixture of the release before it to FIXTURES.
 */
import assert from "node:assert/strict";
import { temporaryDir, testModels } from "../_helpers.ts";
import {
  metricIn,
  metricsText,
  ok,
  PERMISSIONS,
  serverEnvironment,
  type ServerProcess,
  startServerProcess,
} from "../_server_process.ts";
import { FIXTURE_SEARCHES } from "../../tools/make_store_fixture.ts";
import { STORE_FORMAT_VERSION } from "../../src/storage/store_format.ts";
import { storeFormatKey } from "../../src/storage/kv_keys.ts";

/** The stores kept, each written by the commit it names: the main that issue 43 began from (format 1), and the one before the credential indexes of format 3. */
const FIXTURES = ["store-a281eac", "store-4992a89", "store-801811d"];

interface Fixture {
  commit: string;
  keys: { default: string; acme: string; scoped: string; tokenKeyId: string; tokenPrivateKey: JsonWebKey };
  expected: {
    docs: Record<string, unknown[]>;
    notes: unknown[];
    searches: { hits: { id: string; score: number }[]; total: number; facets?: unknown }[];
    indexes: { name: string; docCount: number; passageCount: number; version: string; model: unknown }[];
  };
}

/** A copy of a fixture's store in a fresh directory, with the models it was written with. */
async function copyOf(name: string): Promise<{ env: Record<string, string>; fixture: Fixture }> {
  const from = new URL(`../fixtures/${name}/`, import.meta.url).pathname;
  const env = await serverEnvironment();
  const dir = await temporaryDir("quire-upgrade-");
  await Deno.copyFile(`${from}quire.kv`, `${dir}/quire.kv`);
  await Deno.writeTextFile(
    env.MODELS_FILE!,
    JSON.stringify({ ...await testModels(), "client-8": { version: "1", dimensions: 8 } }),
  );
  const fixture = JSON.parse(await Deno.readTextFile(`${from}fixture.json`)) as Fixture;
  return { env: { ...env, DENO_KV_PATH: `${dir}/quire.kv`, LOG_REQUESTS: "false" }, fixture };
}

function callAs(server: ServerProcess, headers: Record<string, string>, body: Record<string, unknown>) {
  return fetch(server.url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-service-version": "v1", ...headers },
    body: JSON.stringify({ projectId: "default", ...body }),
  });
}

async function tenantToken(fixture: Fixture): Promise<string> {
  const part = (value: unknown) =>
    new TextEncoder().encode(JSON.stringify(value)).toBase64({ alphabet: "base64url", omitPadding: true });
  const key = await crypto.subtle.importKey("jwk", fixture.keys.tokenPrivateKey, { name: "Ed25519" }, false, ["sign"]);
  const claims = { exp: Math.floor(Date.now() / 1000) + 60, indexes: { docs: { filter: { tenant: "b" } } } };
  const signed = `${part({ alg: "EdDSA", kid: fixture.keys.tokenKeyId })}.${part(claims)}`;
  const signature = new Uint8Array(await crypto.subtle.sign("Ed25519", key, new TextEncoder().encode(signed)));
  return `${signed}.${signature.toBase64({ alphabet: "base64url", omitPadding: true })}`;
}

for (const name of FIXTURES) {
  Deno.test(`the store that ${name} holds opens today and answers every document, search and key as it did`, async () => {
    const { env, fixture } = await copyOf(name);
    const kv = await Deno.openKv(env.DENO_KV_PATH);
    const format = (await kv.get<number>(storeFormatKey())).value;
    kv.close();
    let output = "";
    await using server = await startServerProcess(env, fixture.keys.default, {
      onStdout: (text) => output += text,
    });
    const { expected } = fixture;
    const indexes = await ok<Fixture["expected"]["indexes"]>(server, { action: "listIndexes" });
    assert.deepEqual(
      indexes.map(({ name, docCount, passageCount, version, model }) => ({
        name,
        docCount,
        passageCount,
        version,
        model,
      })),
      expected.indexes.map(({ name, docCount, passageCount, version, model }) => ({
        name,
        docCount,
        passageCount,
        version,
        model,
      })),
    );
    for (const [index, docs] of Object.entries(expected.docs)) {
      assert.deepEqual(await ok(server, { action: "getDocs", indexName: index }), docs, `every document of ${index}`);
    }
    for (const [i, search] of FIXTURE_SEARCHES.entries()) {
      const answer = await ok<Fixture["expected"]["searches"][number]>(server, { action: "search", ...search });
      const was = expected.searches[i]!;
      assert.equal(answer.total, was.total, JSON.stringify(search));
      assert.deepEqual(answer.hits.map((hit) => hit.id), was.hits.map((hit) => hit.id), JSON.stringify(search));
      answer.hits.forEach((hit, h) => assert.ok(Math.abs(hit.score - was.hits[h]!.score) < 1e-6, `score ${hit.id}`));
      assert.deepEqual(answer.facets, was.facets);
    }
    if (format !== STORE_FORMAT_VERSION) {
      assert.match(output, new RegExp(`Upgraded the store from format \\d to ${STORE_FORMAT_VERSION}`));
    }
    // Its snapshots, of an earlier snapshot format, were read: no index was rebuilt from its document records.
    const metrics = await metricsText(server);
    assert.equal(metricIn(metrics, 'quire_index_loads_total{kind="full"}'), 0);
    assert.ok(metricIn(metrics, 'quire_index_loads_total{kind="snapshot"}') >= 2);

    // Keys: the project keys, the scoped key within its scope, and a tenant token of the registered public key.
    const acme = await callAs(server, { "x-project-key": fixture.keys.acme }, {
      projectId: "acme",
      action: "getDocs",
      indexName: "notes",
    });
    assert.deepEqual(await acme.json(), expected.notes);
    const scoped = { "x-project-key": fixture.keys.scoped };
    assert.equal((await callAs(server, scoped, { action: "getDocs", indexName: "docs" })).status, 200);
    assert.equal((await callAs(server, scoped, { action: "getDocs", indexName: "vectors" })).status, 403);
    assert.equal((await callAs(server, scoped, { action: "deleteIndex", indexName: "docs" })).status, 403);
    const bearer = { authorization: `Bearer ${await tenantToken(fixture)}` };
    const tenant = await callAs(server, bearer, {
      action: "search",
      indexName: "docs",
      query: "river",
      mode: "fulltext",
    });
    const { hits } = await tenant.json();
    assert.equal(tenant.status, 200);
    assert.ok(hits.length > 0 && hits.every((hit: { metadata: { tenant: string } }) => hit.metadata.tenant === "b"));

    // The upgraded store takes writes, and a restart reads it as the format it now is.
    await ok(server, {
      action: "addDocs",
      indexName: "docs",
      docs: [{ id: "new", text: "written after the upgrade" }],
    });
    await server.stop();
    output = "";
    await using again = await startServerProcess(env, fixture.keys.default, { onStdout: (text) => output += text });
    assert.equal((await ok<unknown[]>(again, { action: "getDocs", indexName: "docs" })).length, 25);
    assert.doesNotMatch(output, /Upgraded the store/);
  });
}

Deno.test("a store of a newer format is refused at start, naming both formats, and left as it was", async () => {
  const { env } = await copyOf(FIXTURES[0]!);
  const kv = await Deno.openKv(env.DENO_KV_PATH!);
  await kv.set(storeFormatKey(), STORE_FORMAT_VERSION + 1);
  kv.close();
  const digest = async () =>
    new Uint8Array(await crypto.subtle.digest("SHA-256", await Deno.readFile(env.DENO_KV_PATH!))).toHex();
  const before = await digest();
  const main = new URL("../../main.ts", import.meta.url).pathname;
  const started = await new Deno.Command(Deno.execPath(), { args: ["run", ...PERMISSIONS, main], env }).output();
  const stderr = new TextDecoder().decode(started.stderr);
  assert.equal(started.code, 1);
  assert.match(stderr, new RegExp(`format ${STORE_FORMAT_VERSION + 1}.*up to ${STORE_FORMAT_VERSION}`));
  assert.equal(await digest(), before, "the store file is unchanged");
});
