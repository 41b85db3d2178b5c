/**
 * Hostile input: property-based requests with wrong types, missing fields, huge strings, deep nesting, unicode edge
 * cases (lone surrogates, NUL, RTL), prototype keys, numbers where strings belong, duplicate ids, oversized bodies
 * and bodies that stall. Whatever arrives, the answer is a JSON error with a 4xx status (or a success), never a 5xx,
 * a crash or a stack trace, and the heap returns to its size after a warm-up. `FUZZ_RUNS` sets the number of cases
 * (`deno task soak` runs 10,000).
 */
import assert from "node:assert/strict";
import v8 from "node:v8";
import vm from "node:vm";
import fc from "fast-check";
import { ACTIONS } from "../../src/api/request_schemas.ts";
import { startTestServer } from "../_helpers.ts";

const RUNS = Number(Deno.env.get("FUZZ_RUNS") ?? "300");
const MAX_BODY_BYTES = 256 * 1024;
const BODY_TIMEOUT_MS = 150;
/** Heap growth past the warm-up that counts as a leak. */
const MAX_HEAP_GROWTH = 16 * 1024 * 1024;

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
    fc.array(fc.record({ id: fc.oneof(nasty, fc.integer(), fc.constant("dup")), text: field, metadata: field }, {
      requiredKeys: [],
    })),
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

/** A JSON body past the size limit, padded with a long document text. */
const oversizedBody = fc.integer({ min: MAX_BODY_BYTES + 1, max: 4 * MAX_BODY_BYTES }).map((size) =>
  JSON.stringify({
    action: "addDocs",
    projectId: "default",
    indexName: "fuzz",
    docs: [{ id: "x", text: "a".repeat(size) }],
  })
);

/** A body that sends its first bytes, then stalls past the body timeout. */
class SlowBody {
  constructor(readonly prefix: string) {}
  stream(): ReadableStream<Uint8Array> {
    const bytes = new TextEncoder().encode(this.prefix);
    return new ReadableStream({
      async pull(controller) {
        controller.enqueue(bytes);
        await new Promise((resolve) => setTimeout(resolve, BODY_TIMEOUT_MS * 3));
        controller.close();
      },
    });
  }
}
const slowBody = fc.constantFrom('{"action":"addDocs","docs":[', "{", '{"action":"search","query":"').map((prefix) =>
  new SlowBody(prefix)
);

type Input = Record<string, unknown> | string | Uint8Array<ArrayBuffer> | SlowBody;

const inputs: fc.Arbitrary<Input> = fc.oneof(
  { weight: 90, arbitrary: body },
  { weight: 8, arbitrary: rawBody },
  { weight: 1, arbitrary: oversizedBody },
  { weight: 1, arbitrary: slowBody },
);

function bodyOf(input: Input): BodyInit {
  if (input instanceof SlowBody) return input.stream();
  return typeof input === "object" && !(input instanceof Uint8Array) ? JSON.stringify(input) : input;
}

/** The heap in use after a full garbage collection. */
function heapAfterGc(): number {
  v8.setFlagsFromString("--expose-gc");
  (vm.runInNewContext("gc") as () => void)();
  return Deno.memoryUsage().heapUsed;
}

Deno.test(`${RUNS} generated hostile requests get a JSON 4xx or a success, never a 5xx`, async () => {
  await using server = await startTestServer({
    env: {
      MAX_BODY_BYTES: String(MAX_BODY_BYTES),
      BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
      PROJECT_MAX_CONCURRENCY: "1000",
    },
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
    const property = fc.asyncProperty(inputs, async (input) => {
      const response = await server.send(bodyOf(input));
      const text = await response.text();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      assert.ok(response.status < 500, `${response.status} for ${JSON.stringify(input).slice(0, 300)}: ${text}`);
      if (response.status >= 400) {
        const error = JSON.parse(text);
        assert.equal(typeof error.error, "string");
        assert.doesNotMatch(error.error, /\bat .*\.ts:\d+|node_modules|file:\/\//, "no stack traces or paths");
      }
    });
    const seed = Number(Deno.env.get("FUZZ_SEED") ?? "20261122");
    // A warm-up fills the caches and the model's buffers, so that what stays after the run counts as a leak.
    await fc.assert(property, { numRuns: 100, seed: seed + 1 });
    const baseline = heapAfterGc();
    statuses.clear();
    await fc.assert(property, { numRuns: RUNS, seed });
    const growth = heapAfterGc() - baseline;
    assert.ok((statuses.get(400) ?? 0) > RUNS / 4, `mostly rejected as bad input: ${JSON.stringify([...statuses])}`);
    assert.ok(growth < MAX_HEAP_GROWTH, `the heap grew by ${growth} bytes`);
    const by = [...statuses].sort(([a], [b]) => a - b).map(([status, count]) => `${status}×${count}`).join(" ");
    const mib = (growth / 1024 / 1024).toFixed(1);
    console.log(`hostile input: ${RUNS} cases tried, 0 violations (${by}); heap after vs warm-up ${mib} MiB`);
    // The server still answers, and every index the fuzz left behind is whole.
    for (const index of await server.ok<{ name: string; docCount: number }[]>({ action: "listIndexes" })) {
      const docs = await server.ok<unknown[]>({ action: "getDocs", indexName: index.name });
      assert.equal(docs.length, index.docCount);
    }
  } finally {
    console.warn = originalWarn;
  }
});
