/**
 * Unit: cosine scores, exact on the JS heap and those of the float16 rows in shared memory, which round each
 * component to 11 significant bits.
 */
import assert from "node:assert/strict";
import { VectorStore } from "../../src/search/vector_store.ts";
import { HalfRows } from "../../src/vector_scan/half_rows.ts";
import { scanHelperCalls, scanHelperStarted } from "../../src/vector_scan/scan_helper.ts";
import { normals, unitVector } from "../_vectors.ts";

/** Not a multiple of eight, so that the kernels' zero padding and the JS loop's last partial step are covered. */
const DIMS = 103;
/** How far a cosine of float16 rows may lie from the exact one. */
const HALF_TOLERANCE = 1e-4;

function vector(seed: number): Float32Array {
  return new Float32Array(unitVector(seed, DIMS, false));
}

/** The cosine as plain arithmetic defines it, in float64. */
function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot / (Math.hypot(...a) * Math.hypot(...b));
}

/**
 * `vector` as float16 rows store it: times the power of two that brings its largest component within [0.5, 1], rounded
 * to float16 by the runtime's own `Float16Array`, and back.
 */
function halved(vector: Float32Array): Float32Array {
  const largest = Math.max(...vector.map(Math.abs));
  const scale = largest >= 0.5 && largest <= 1 ? 1 : 2 ** (-Math.floor(Math.log2(largest)) - 1);
  return Float32Array.from(new Float16Array(Array.from(vector, (x) => x * scale)));
}

Deno.test("a store's scores stay within float16's rounding of the exact ones when its vectors move to shared memory", () => {
  const store = new VectorStore();
  for (let slot = 0; slot < 1_000; slot++) store.set(slot, vector(slot));
  const query = vector(1_000_000);
  const slots = Array.from({ length: 999 }, (_, i) => (i * 7) % 1_000);
  const small = store.scores(query, slots);
  small.scores.forEach((score, i) => assert.ok(Math.abs(score - cosine(query, vector(slots[i]!))) < 1e-12));
  const before = store.bytes;
  // Past 10,240 rows the vectors move; slots far apart make the shared memory grow several times.
  for (let slot = 1_000; slot < 40_000; slot += 3) store.set(slot, vector(slot));
  store.set(90_000, vector(90_000));
  assert.ok(store.bytes > before);
  const large = store.scores(query, slots);
  large.scores.forEach((score, i) => {
    assert.ok(
      Math.abs(score - small.scores[i]!) < HALF_TOLERANCE,
      `slot ${slots[i]}: ${score} against ${small.scores[i]}`,
    );
  });
  assert.notDeepEqual(large.scores, small.scores, "rounded to float16");
  for (const slot of [0, 999, 1_003, 39_997, 90_000]) assert.deepEqual(store.row(slot), halved(vector(slot)));
  const far = store.scores(query, [90_000, 39_997, 1_003]);
  far.scores.forEach((score, i) => assert.ok(Math.abs(score - cosine(query, store.row(far.slots[i]!))) < 1e-12));
  assert.deepEqual(store.rows(2).slice(DIMS), store.row(1), "rows come whole, without the padding");
});

Deno.test("float16 rows round as the runtime's Float16Array does, at any scale, and store what they give back unchanged", () => {
  const rows = new HalfRows(DIMS, 16);
  const normal = normals(7);
  // Components from 2^-30 to 1 of the largest, so that some round to float16's subnormals or to zero, and scales far
  // past float16's range.
  const wide = Float32Array.from({ length: DIMS }, (_, i) => normal() * 2 ** -(i % 31));
  const cases = [wide, wide.map((x) => x * 1e30), wide.map((x) => x * 1e-30), vector(3)];
  for (const [slot, input] of cases.entries()) {
    const length = rows.set(slot, input);
    const stored = rows.row(slot);
    const largest = Math.max(...stored.map(Math.abs));
    assert.ok(largest >= 0.5 && largest <= 1, `slot ${slot}: largest ${largest}`);
    assert.deepEqual(stored, halved(input), `slot ${slot}`);
    assert.equal(length, Math.sqrt(stored.reduce((sum, x) => sum + x * x, 0)));
    assert.ok(cosine(stored, input) > 1 - 1e-6);
    // A row read back (as a snapshot stores it) and stored again keeps its halves.
    assert.equal(rows.set(slot + 8, stored), length);
    assert.deepEqual(rows.row(slot + 8), stored);
  }
  assert.equal(rows.set(12, new Float32Array(DIMS)), 0, "a zero vector stays zero");
  assert.deepEqual(rows.row(12), new Float32Array(DIMS));
});

Deno.test("float16 rows stored from their halves, as a snapshot keeps them, score as the rows they came from", () => {
  const rows = 10_300;
  const original = new VectorStore();
  for (let slot = 0; slot < rows; slot++) original.set(slot, vector(slot));
  assert.ok(original.halfRows);
  const halvesOf = (slot: number) => new Uint8Array(Float16Array.from(original.row(slot)).buffer);
  const copied = new VectorStore();
  copied.reserve(rows, DIMS);
  // Through a view at an odd offset, as a snapshot's frame hands them on.
  const framed = new Uint8Array(1 + DIMS * 2);
  for (let slot = 0; slot < rows; slot++) {
    framed.set(halvesOf(slot), 1);
    copied.setHalves(slot, framed.subarray(1));
  }
  const slots = Array.from({ length: 500 }, (_, i) => i * 20);
  const query = vector(1e6);
  assert.deepEqual(copied.scores(query, slots), original.scores(query, slots), "the same rows and lengths");
  assert.deepEqual(copied.row(77), original.row(77));
  // Many rows a copy, as a snapshot's rows are read: runs within and past one kernel call's rows.
  const inRuns = new VectorStore();
  inRuns.reserve(rows, DIMS);
  for (const [from, to] of [[0, 1_000], [1_000, 4_000], [4_000, rows]]) {
    inRuns.setRowsOf(from!, original.rowsOf(from!, to! - from!).slice(), true);
  }
  assert.deepEqual(inRuns.scores(query, slots), original.scores(query, slots), "the same rows and lengths");
  // A store without shared memory (fewer rows) widens the halves.
  const small = new VectorStore();
  small.setHalves(3, halvesOf(3));
  assert.ok(!small.halfRows);
  assert.deepEqual(small.row(3), original.row(3));
});

Deno.test("shared rows score odd counts, counts past one kernel call, and halves on the helper thread", async () => {
  const rows = new HalfRows(DIMS, 10);
  for (let slot = 0; slot < 5_000; slot++) {
    rows.reserve(slot + 1);
    rows.set(slot, vector(slot));
  }
  const stored = rows.row(3);
  rows.reserve(50_000);
  assert.deepEqual(rows.row(3), stored, "a row reads the same after growth");
  await scanHelperStarted();
  const calls = scanHelperCalls();
  const query = vector(2_000_000);
  const slotsOf = (count: number) => Array.from({ length: count }, (_, i) => (i * 7_919) % 5_000);
  for (const count of [1, 3, 255, 257, 2_501]) {
    const slots = slotsOf(count);
    const dots = rows.dots(query, slots);
    assert.equal(dots.length, count);
    slots.forEach((slot, i) => {
      const row = rows.row(slot);
      let dot = 0;
      for (let d = 0; d < DIMS; d++) dot += query[d]! * row[d]!;
      assert.ok(Math.abs(dots[i]! - dot) < 1e-12, `slot ${slot} of ${count}`);
    });
  }
  // The helper runs a half it has begun by the time this thread's half is done: on a busy machine, not always.
  for (let i = 0; i < 100 && scanHelperCalls() === calls; i++) rows.dots(query, slotsOf(2_501));
  assert.ok(navigator.hardwareConcurrency < 2 || scanHelperCalls() > calls, "large calls ran in halves");
});

Deno.test("a store whose heap rows outnumber the slots at the move keeps every vector", () => {
  const store = new VectorStore();
  // Room for 6,000 doubles to 12,000 heap rows, past the 10,240 at which the vectors move.
  store.reserve(6_000, DIMS);
  for (let slot = 0; slot < 10_500; slot++) store.set(slot, vector(slot));
  assert.ok(store.halfRows);
  for (const slot of [0, 5_999, 10_239, 10_499]) assert.deepEqual(store.row(slot), halved(vector(slot)));
});
