/**
 * Hostile input: property-based requests with wrong types, missing fields, huge strings, deep nesting, unicode edge
 * cases (lone surrogates, NUL, RTL), prototype keys and numbers where strings belong. Whatever arrives, the answer
 * is a JSON error with a 4xx status (or a success), never a 5xx, a crash or a stack trace. `FUZZ_RUNS` sets the
 * number of cases (`deno task soak` runs 10,000).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { ACTIONS } from "../src/api/request_schemas.ts";
import { startTestServer } from "./_helpers.ts";

const RUNS = Number(Deno.env.get("FUZZ_RUNS") ?? "300");

const nasty = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }), // lone surrogates included
  fc.constantFrom("", " ", "\u0000", "\u202e\u0645\u0631\u062d\u0628\u0627", "__proto__", "constructor", "$where"),
  fc.string({ minLength: 5_000, maxLength: 20_000 }),
);

const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  any: fc.oneof(
    { depthSize: "small" },
    nasty,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("any"), { maxLength: 5 }),
    fc.dictionary(fc.oneof(nasty, fc.constantFrom("__proto__", "constructor", "$gt", "$in")), tie("any"), {
      maxKeys: 5,
    }),
  ),
})).any;

/** A deeply nested value, past what any schema allows. */
const deep = fc.integer({ min: 50, max: 3_000 }).map((depth) => {
  let nested: unknown = "bottom";
  for (let i = 0; i < depth; i++) nested = i % 2 === 0 ? [nested] : { $and: nested };
  return nested;
});

const field = fc.oneof(value, deep);
const actions = fc.oneof(
  fc.constantFrom(...ACTIONS),
  nasty,
  fc.integer(),
);
const body = fc.record({
  action: actions,
  projectId: fc.oneof(fc.constant("default"), nasty),
  indexName: fc.oneof(fc.constantFrom("fuzz", "missing"), field),
  docs: fc.oneof(
    field,
    fc.array(fc.record({ id: fc.oneof(nasty, fc.integer()), text: field, metadata: field }, { requiredKeys: [] })),
  ),
  docIds: field,
  query: field,
  mode: field,
  limit: field,
  offset: field,
  filter: field,
  include: field,
  options: field,
  modelId: field,
}, { requiredKeys: [] });

/** Raw bodies: not JSON, not an object, or not UTF-8. */
const rawBody = fc.oneof(
  fc.string(),
  fc.uint8Array({ maxLength: 64 }),
  fc.constantFrom("[]", "null", "1", '"x"', "{", '{"action":', "\uFEFF{}"),
);

Deno.test(`${RUNS} generated hostile requests get a JSON 4xx or a success, never a 5xx`, async () => {
  const server = await startTestServer({
    env: { MAX_BODY_BYTES: String(256 * 1024), PROJECT_MAX_CONCURRENCY: "1000" },
  });
  const originalWarn = console.warn;
  console.warn = () => {};
  try {
    await server.ok({
      action: "createIndex",
      indexName: "fuzz",
      docs: [{ id: "a", text: "seed", metadata: { k: 1 } }],
    });
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fc.oneof({ weight: 9, arbitrary: body }, { weight: 1, arbitrary: rawBody }), async (input) => {
        const response = typeof input === "object" && !(input instanceof Uint8Array)
          ? await server.send(JSON.stringify(input))
          : await server.send(input as string | Uint8Array<ArrayBuffer>);
        const text = await response.text();
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        assert.ok(response.status < 500, `${response.status} for ${JSON.stringify(input).slice(0, 300)}: ${text}`);
        if (response.status >= 400) {
          const error = JSON.parse(text);
          assert.equal(typeof error.error, "string");
          assert.doesNotMatch(error.error, /\bat .*\.ts:\d+|node_modules|file:\/\//, "no stack traces or paths");
        }
      }),
      { numRuns: RUNS, seed: Number(Deno.env.get("FUZZ_SEED") ?? "20261122") },
    );
    assert.ok((statuses.get(400) ?? 0) > RUNS / 4, `mostly rejected as bad input: ${JSON.stringify([...statuses])}`);
    const by = [...statuses].sort(([a], [b]) => a - b).map(([status, count]) => `${status}×${count}`).join(" ");
    console.log(`hostile input: ${RUNS} cases tried, 0 violations (${by})`);
    // The server still answers, and every index the fuzz left behind is whole.
    for (const index of await server.ok<{ name: string; docCount: number }[]>({ action: "listIndexes" })) {
      const docs = await server.ok<unknown[]>({ action: "getDocs", indexName: index.name });
      assert.equal(docs.length, index.docCount);
    }
  } finally {
    console.warn = originalWarn;
    await server.close();
  }
});
