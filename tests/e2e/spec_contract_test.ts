/**
 * End-to-end: the spec's field tables (`index-lifecycle-api.md`, sections 2 and 4), walked field by field. Every
 * required field left out is `400` naming it, every field of the wrong type is `400` naming it, and no rejected call
 * changes anything. A later change that loosens the contract fails here.
 */
import assert from "node:assert/strict";
import { assertJsonError, startTestServer, type TestServer } from "../_helpers.ts";

type Json = Record<string, unknown>;

/** A path into a request body: field names and array positions. */
type Path = (string | number)[];

/** One field of a spec table: where it sits in a valid request, whether it is required, and a value of a wrong type. */
interface SpecField {
  path: Path;
  required: boolean;
  wrongTypes: unknown[];
}

const NOT_A_STRING = [7, true, null, ["a"], { a: 1 }];
const NOT_AN_ARRAY = ["a", 7, { a: 1 }, null];
const NOT_AN_OBJECT = ["a", 7, ["a"], true];
const NOT_A_BOOLEAN = ["yes", 1, null, ["a"]];

/** Section 2.1, the document: `id` and `text` are required strings, `metadata` an optional object. */
function documentFields(at: Path): SpecField[] {
  return [
    { path: [...at, "id"], required: true, wrongTypes: NOT_A_STRING },
    { path: [...at, "text"], required: true, wrongTypes: NOT_A_STRING },
    { path: [...at, "metadata"], required: false, wrongTypes: NOT_AN_OBJECT },
  ];
}

/** Section 4.1: every action names its action and project; all but `listIndexes` name an index. */
function sharedFields(indexScoped: boolean): SpecField[] {
  const fields: SpecField[] = [
    { path: ["action"], required: true, wrongTypes: [7, null, ["getIndex"]] },
    { path: ["projectId"], required: true, wrongTypes: NOT_A_STRING },
  ];
  if (indexScoped) fields.push({ path: ["indexName"], required: true, wrongTypes: NOT_A_STRING });
  return fields;
}

/** Section 4.2: each action's valid request, and the fields of its row of the table. */
const ACTIONS: { action: string; valid: Json; fields: SpecField[] }[] = [
  {
    action: "createIndex",
    valid: { action: "createIndex", indexName: "new", docs: [{ id: "n1", text: "new text", metadata: { a: 1 } }] },
    fields: [
      ...sharedFields(true),
      { path: ["docs"], required: true, wrongTypes: NOT_AN_ARRAY },
      { path: ["docs", 0], required: false, wrongTypes: ["a", 7, null, ["a"]] },
      ...documentFields(["docs", 0]),
      { path: ["modelId"], required: false, wrongTypes: [7, null, ["svc-minilm"]] },
    ],
  },
  { action: "getIndex", valid: { action: "getIndex", indexName: "seeded" }, fields: sharedFields(true) },
  { action: "listIndexes", valid: { action: "listIndexes" }, fields: sharedFields(false) },
  { action: "deleteIndex", valid: { action: "deleteIndex", indexName: "seeded" }, fields: sharedFields(true) },
  {
    action: "addDocs",
    valid: {
      action: "addDocs",
      indexName: "seeded",
      docs: [{ id: "q", text: "queued text", metadata: { a: 2 } }],
      options: { upsert: true },
    },
    fields: [
      ...sharedFields(true),
      { path: ["docs"], required: true, wrongTypes: NOT_AN_ARRAY },
      { path: ["docs", 0], required: false, wrongTypes: ["a", 7, null, ["a"]] },
      ...documentFields(["docs", 0]),
      { path: ["options"], required: false, wrongTypes: NOT_AN_OBJECT },
      { path: ["options", "upsert"], required: false, wrongTypes: NOT_A_BOOLEAN },
    ],
  },
  {
    action: "deleteDocs",
    valid: { action: "deleteDocs", indexName: "seeded", docIds: ["s1"] },
    fields: [
      ...sharedFields(true),
      { path: ["docIds"], required: true, wrongTypes: [...NOT_AN_ARRAY, []] },
      { path: ["docIds", 0], required: false, wrongTypes: [7, null, ["s1"], { id: "s1" }] },
    ],
  },
  {
    action: "getDocs",
    valid: { action: "getDocs", indexName: "seeded", options: { docIds: ["s1"] } },
    fields: [
      ...sharedFields(true),
      { path: ["options"], required: false, wrongTypes: NOT_AN_OBJECT },
      { path: ["options", "docIds"], required: false, wrongTypes: NOT_AN_ARRAY },
      { path: ["options", "docIds", 0], required: false, wrongTypes: [7, null, { id: "s1" }] },
    ],
  },
];

const REMOVE = Symbol("remove");

/** A deep copy of `body` with the value at `path` replaced, or removed when `value` is `REMOVE`. */
function withField(body: Json, path: Path, value: unknown): Json {
  const copy = structuredClone(body);
  let parent: Record<string | number, unknown> = copy;
  for (const part of path.slice(0, -1)) parent = parent[part] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  if (value === REMOVE) delete parent[last];
  else parent[last] = value;
  return copy;
}

/** How the service names a field in its messages: `docs[0].text`. */
function fieldName(path: Path): string {
  return path.map((part, i) => typeof part === "number" ? `[${part}]` : i === 0 ? part : `.${part}`).join("");
}

/** Everything a rejected call could have changed: the indexes (counts, versions, times) and the seeded documents. */
async function visibleState(server: TestServer): Promise<unknown> {
  return {
    indexes: await server.ok({ action: "listIndexes" }),
    docs: await server.ok({ action: "getDocs", indexName: "seeded" }),
  };
}

/** Sends `body` and asserts a 400 that names the field at `path` (the action's own name for `action`). */
async function assertRejected(server: TestServer, body: Json, path: Path): Promise<void> {
  const name = fieldName(path);
  const escaped = name.replace(/[[\].]/g, (c) => `\\${c}`);
  await assertJsonError(await server.send(JSON.stringify(body)), 400, new RegExp(`"${escaped}`));
}

Deno.test("every field of the spec's tables: absent when required, or of a wrong type, is 400 naming it", async (t) => {
  await using server = await startTestServer();
  await server.ok({ action: "createIndex", indexName: "seeded", docs: [{ id: "s1", text: "seeded text" }] });
  const before = await visibleState(server);
  for (const { action, valid, fields } of ACTIONS) {
    const body = { projectId: "default", ...valid };
    for (const field of fields) {
      const name = fieldName(field.path);
      if (field.required) {
        await t.step(`${action} without "${name}"`, async () => {
          await assertRejected(server, withField(body, field.path, REMOVE), field.path);
        });
      }
      await t.step(`${action} with "${name}" of a wrong type`, async () => {
        for (const wrong of field.wrongTypes) {
          await assertRejected(server, withField(body, field.path, wrong), field.path);
        }
      });
    }
  }
  await t.step("no rejected call changed an index or a document", async () => {
    assert.deepEqual(await visibleState(server), before);
    await assertJsonError(await server.call({ action: "getIndex", indexName: "new" }), 404);
  });
  await t.step("and each valid request is accepted, so the matrix above rejected for the field alone", async () => {
    for (const { valid } of ACTIONS.filter(({ action }) => action !== "deleteIndex")) await server.ok(valid);
    await server.ok({ action: "deleteIndex", indexName: "seeded" });
  });
});

Deno.test("createIndex and addDocs with a document without text are 400 naming it, and leave nothing", async () => {
  await using server = await startTestServer();
  const missing = /Missing required field "docs\[0\]\.text"/;
  await assertJsonError(
    await server.call({ action: "createIndex", indexName: "a", docs: [{ id: "a" }] }),
    400,
    missing,
  );
  await assertJsonError(await server.call({ action: "getIndex", indexName: "a" }), 404);
  assert.deepEqual(await server.ok({ action: "listIndexes" }), []);

  await server.ok({ action: "createIndex", indexName: "b", docs: [{ id: "b1", text: "kept" }] });
  const index = await server.ok({ action: "getIndex", indexName: "b" });
  const docs = [{ id: "q" }];
  await assertJsonError(await server.call({ action: "addDocs", indexName: "b", docs }), 400, missing);
  assert.deepEqual(await server.ok({ action: "getIndex", indexName: "b" }), index);
  assert.deepEqual(await server.ok({ action: "getDocs", indexName: "b" }), [{ id: "b1", text: "kept" }]);

  // An empty text is a text: the document is stored, and returned with it.
  await server.ok({ action: "addDocs", indexName: "b", docs: [{ id: "q", text: "" }] });
  assert.deepEqual(await server.ok({ action: "getDocs", indexName: "b", options: { docIds: ["q"] } }), [
    { id: "q", text: "" },
  ]);
});

Deno.test("the spec's headers: x-project-key is checked (403) and x-service-version must be v1 (400)", async () => {
  await using server = await startTestServer();
  const body = { action: "listIndexes" };
  await assertJsonError(await server.call(body, { "x-project-key": "" }), 403);
  await assertJsonError(await server.call(body, { "x-project-key": "qk_wrong" }), 403);
  await assertJsonError(await server.call(body, { "x-service-version": "v2" }), 400, /x-service-version/);
  const response = await fetch(server.url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-project-key": server.key },
    body: JSON.stringify({ projectId: "default", ...body }),
  });
  await assertJsonError(response, 400, /Missing header "x-service-version"/);
});
