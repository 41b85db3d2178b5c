/** Unit: exact cosine scores, the same bits whether the vectors lie on the JS heap or in shared memory. */
import assert from "node:assert/strict";
import { VectorStore } from "../src/search/vector_store.ts";
import { FloatRows } from "../src/vector_scan/float_rows.ts";
import { scanHelperCalls, scanHelperStarted } from "../src/vector_scan/scan_helper.ts";
import { unitVector } from "./_vectors.ts";

/** Not a multiple of four, so that the kernel's zero padding and the JS loop's last partial step are covered. */
const DIMS = 103;

function vector(seed: number): Float32Array {
  return new Float32Array(unitVector(seed, DIMS, false));
}

/** The cosine as plain arithmetic defines it, in float64. */
function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot / (Math.hypot(...a) * Math.hypot(...b));
}

Deno.test("a store's scores keep their bits when its vectors move to shared memory as it grows", () => {
  const store = new VectorStore();
  for (let slot = 0; slot < 1_000; slot++) store.set(slot, vector(slot));
  const query = vector(1_000_000);
  const slots = Array.from({ length: 999 }, (_, i) => (i * 7) % 1_000);
  const small = store.scores(query, slots);
  const before = store.bytes;
  // Past 16,384 rows the vectors move; slots far apart make the shared memory grow several times.
  for (let slot = 1_000; slot < 40_000; slot += 3) store.set(slot, vector(slot));
  store.set(90_000, vector(90_000));
  assert.ok(store.bytes > before);
  const large = store.scores(query, slots);
  assert.deepEqual(large, small, "the same bits on either side of the move");
  for (const slot of [0, 999, 1_003, 39_997, 90_000]) {
    assert.deepEqual(store.row(slot), vector(slot));
  }
  const far = store.scores(query, [90_000, 39_997, 1_003]);
  far.scores.forEach((score, i) => assert.ok(Math.abs(score - cosine(query, vector(far.slots[i]!))) < 1e-12));
  assert.deepEqual(store.rows(2).slice(DIMS), vector(1), "rows come whole, without the padding");
});

Deno.test("shared rows score odd counts, counts past one kernel call, and halves on the helper thread", async () => {
  const rows = new FloatRows(DIMS, 10);
  const stored = new Map<number, Float32Array>();
  for (let slot = 0; slot < 5_000; slot++) {
    stored.set(slot, vector(slot));
    rows.reserve(slot + 1);
    rows.set(slot, stored.get(slot)!);
  }
  const view = rows.row(3);
  rows.reserve(50_000);
  assert.deepEqual(view, vector(3), "a view taken before growth still reads its row");
  await scanHelperStarted();
  const calls = scanHelperCalls();
  const query = vector(2_000_000);
  const slotsOf = (count: number) => Array.from({ length: count }, (_, i) => (i * 7_919) % 5_000);
  for (const count of [1, 3, 255, 257, 2_501]) {
    const slots = slotsOf(count);
    const dots = rows.dots(query, slots);
    assert.equal(dots.length, count);
    slots.forEach((slot, i) => {
      let dot = 0;
      for (let d = 0; d < DIMS; d++) dot += query[d]! * stored.get(slot)![d]!;
      assert.ok(Math.abs(dots[i]! - dot) < 1e-12, `slot ${slot} of ${count}`);
    });
  }
  // The helper runs a half it has begun by the time this thread's half is done: on a busy machine, not always.
  for (let i = 0; i < 100 && scanHelperCalls() === calls; i++) rows.dots(query, slotsOf(2_501));
  assert.ok(navigator.hardwareConcurrency < 2 || scanHelperCalls() > calls, "large calls ran in halves");
});

Deno.test("a store whose heap rows outnumber the slots at the move keeps every vector", () => {
  const store = new VectorStore();
  // Room for 9,000 doubles to 18,000 heap rows, past the 16,384 at which the vectors move.
  store.reserve(9_000, DIMS);
  for (let slot = 0; slot < 16_500; slot++) store.set(slot, vector(slot));
  for (const slot of [0, 8_999, 16_383, 16_499]) assert.deepEqual(store.row(slot), vector(slot));
});
