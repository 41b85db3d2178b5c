/**
 * Tenancy: with its own key, project A can neither read, list, change nor learn of any index of project B. Every
 * action is tried both ways: naming B as the project (403, whatever the index), and naming B's index inside A (the
 * same answer as for a name that exists nowhere). B's index is unchanged afterwards.
 */
import assert from "node:assert/strict";
import { ACTIONS } from "../../src/api/request_schemas.ts";
import { createProject } from "../../src/projects/project_store.ts";
import { startTestServer } from "../_helpers.ts";

/** A request of each action against `indexName`, valid but for whose index it names. */
function requests(indexName: string): Record<string, unknown>[] {
  const docs = [{ id: "x", text: "planted by another project" }];
  const bodies: Record<(typeof ACTIONS)[number], Record<string, unknown>> = {
    createIndex: { indexName, docs },
    getIndex: { indexName },
    listIndexes: {},
    deleteIndex: { indexName },
    addDocs: { indexName, docs },
    deleteDocs: { indexName, docIds: ["s1", "s2"] },
    getDocs: { indexName },
    search: { indexName, query: "secret" },
    multiSearch: { queries: [{ indexName, query: "secret" }, { indexName, similarTo: "s1" }] },
    reembedIndex: { indexName },
    exportIndex: { indexName },
    importIndex: { indexName },
    createKey: {},
    listKeys: {},
    deleteKey: { keyId: "k_of_b" },
    getWebhookSecret: {},
    rotateWebhookSecret: {},
    setAlias: { alias: `${indexName}-alias`, indexName },
    deleteAlias: { alias: indexName },
    listAliases: {},
    restoreIndex: { indexName },
    listDeletedIndexes: {},
    updateSettings: { indexName, settings: { synonyms: [{ words: ["secret", "hidden"] }] } },
    searchAnalytics: { indexName },
    recordClick: { indexName, query: "secret", id: "doc-1", position: 1 },
  };
  return ACTIONS.map((action) => ({ action, ...bodies[action] }));
}

Deno.test("a key of project A neither reads, lists, changes nor learns of project B's indexes", async () => {
  await using server = await startTestServer();
  const keyB = (await createProject(server.kv, "b"))!;
  const asB = (body: Record<string, unknown>) => server.call({ projectId: "b", ...body }, { "x-project-key": keyB });
  const docs = [{ id: "s1", text: "secret one", metadata: { level: 9 } }, { id: "s2", text: "secret two" }];
  assert.equal((await asB({ action: "createIndex", indexName: "secret", docs })).status, 200);
  const before = await (await asB({ action: "getDocs", indexName: "secret" })).text();
  const indexBefore = await (await asB({ action: "getIndex", indexName: "secret" })).json();

  let tried = 0;
  for (const body of requests("secret")) {
    // Naming project B with A's key: refused before anything about B's indexes is looked at.
    const foreign = await server.call({ ...body, projectId: "b" });
    assert.equal(foreign.status, 403, `${body.action} as project b`);
    assert.doesNotMatch(await foreign.text(), /secret/);
    tried++;
  }
  // Key and webhook secret management names no index: the first loop covers it.
  const indexed = requests("secret").filter((body) =>
    body.action !== "createIndex" && !/Key|WebhookSecret/.test(String(body.action))
  );
  for (const body of indexed) {
    // Naming B's index inside A: the same answer as for a name that exists nowhere.
    const named = await server.call(body);
    const nowhere = await server.call(JSON.parse(JSON.stringify(body).replaceAll("secret", "nowhere")));
    assert.equal(named.status, nowhere.status, `${body.action} of B's index name`);
    assert.equal((await named.text()).replaceAll("secret", "nowhere"), await nowhere.text());
    tried++;
  }
  assert.deepEqual(await server.ok({ action: "listIndexes" }), [], "A lists none of B's indexes");
  // A may create its own index of the same name; it is A's alone.
  await server.ok({ action: "createIndex", indexName: "secret", docs: [{ id: "a1", text: "mine" }] });
  await server.ok({ action: "deleteIndex", indexName: "secret" });

  assert.equal(await (await asB({ action: "getDocs", indexName: "secret" })).text(), before, "B's docs unchanged");
  const indexAfter = await (await asB({ action: "getIndex", indexName: "secret" })).json();
  assert.deepEqual(indexAfter, indexBefore, "B's index unchanged");
  console.log(`tenancy: ${tried} cross-project requests tried, 0 violations`);
});
