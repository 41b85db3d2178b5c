import assert from "node:assert/strict";
import { VectorCodes } from "../../src/vector_scan/vector_codes.ts";
import { codesFileBytes, readSavedCodes } from "../../src/segments/codes_files.ts";
import { FileMapper } from "../../src/util/file_mapping.ts";
import { mappedFiles } from "../_helpers.ts";
import { KERNELS_WASM_BASE64 } from "../../src/vector_scan/kernels_wasm.ts";
import { compileKernels, kernelsModuleText } from "../../tools/build_kernels.ts";
import { unitVector } from "../_vectors.ts";

/** Not a multiple of the kernels' 16-byte steps, so that padding is covered. */
const DIMS = 100;

function vector(seed: number): Float32Array {
  return new Float32Array(unitVector(seed, DIMS, false));
}

/** A vector's int8 codes, scaled so that its largest component is ±127. */
function code(v: Float32Array): number[] {
  const largest = Math.max(...v.map(Math.abs));
  return Array.from(v, (x) => Math.round(x * 127 / largest));
}

/**
 * The prefilter's distance of `v` from `query`, as the scans define it: the sum of the query's magnitudes, rounded to
 * 0-15, where the signs of their codes differ (a zero code counts as negative).
 */
function weightedDistance(v: Float32Array, query: Float32Array): number {
  const q = code(query);
  return code(v).reduce((sum, x, i) => sum + ((x > 0) !== (q[i]! > 0) ? Math.round(Math.abs(q[i]!) * 15 / 127) : 0), 0);
}

/** The slots of `stored` ranked by the cosine of their int8 codes with the query's, as the scans define it. */
function codeRanking(stored: Map<number, Float32Array>, query: Float32Array): number[] {
  const q = code(query);
  const cosine = (v: Float32Array) => {
    const c = code(v);
    return c.reduce((sum, x, i) => sum + x * q[i]!, 0) / Math.hypot(...c);
  };
  return [...stored].map(([slot, v]) => [slot, cosine(v)] as const).sort((a, b) => b[1] - a[1]).map(([slot]) => slot);
}

Deno.test("the committed scan kernels are what kernels.wat compiles to", async () => {
  const compiled = await compileKernels();
  const committed = Uint8Array.from(atob(KERNELS_WASM_BASE64), (char) => char.charCodeAt(0));
  assert.deepEqual(committed, compiled, "run `deno task build:kernels`");
  const text = kernelsModuleText(compiled);
  assert.ok(text.includes(KERNELS_WASM_BASE64.slice(0, 100)));
});

Deno.test("a scan of every code ranks the stored vectors by the cosine of their codes, across growth and removals", () => {
  const codes = new VectorCodes(DIMS);
  const stored = new Map<number, Float32Array>();
  // Slots far apart make the memory grow and move its areas several times.
  for (let i = 0; i < 3_000; i++) {
    const slot = i % 3 === 0 ? 10_000 + i : i;
    stored.set(slot, vector(i));
    codes.set(slot, vector(i));
  }
  for (const slot of [4, 5, 10_003, 2_999]) {
    stored.delete(slot);
    codes.clear(slot);
  }
  codes.set(7, vector(77_777));
  stored.set(7, vector(77_777));
  assert.equal(codes.size, stored.size);
  for (let q = 0; q < 5; q++) {
    const query = vector(1_000_000 + q);
    assert.deepEqual(codes.scan(query, 20), codeRanking(stored, query).slice(0, 20));
  }
  const self = codes.scan(vector(77_777), 1);
  assert.deepEqual(self, [7], "a replaced vector is found by its new value");
});

Deno.test("a prefilter lists the vectors whose signs differ least from the query's, weighed by its magnitudes", () => {
  const codes = new VectorCodes(DIMS);
  const stored: Float32Array[] = [];
  // Two chunks of the helper's passes, and a last block of 32 rows that is not full.
  for (let slot = 0; slot < 9_001; slot++) {
    stored.push(vector(slot));
    codes.set(slot, stored[slot]!);
  }
  codes.clear(17);
  for (let q = 0; q < 4; q++) {
    const query = vector(4_000_000 + q);
    // Asked for more than it lists, the scan returns every listed vector.
    const listed = new Set(codes.scan(query, 1_000, 500));
    assert.ok(Math.abs(listed.size - 500) <= 2, `listed ${listed.size}`);
    assert.ok(!listed.has(17), "a removed vector is not found");
    const distances = stored.map((v) => weightedDistance(v, query));
    const inside = Math.max(...[...listed].map((slot) => distances[slot]!));
    const outside = Math.min(...distances.filter((_, slot) => slot !== 17 && !listed.has(slot)));
    assert.ok(inside <= outside, `listed up to ${inside}, left out from ${outside}`);
  }
});

Deno.test("a prefiltered scan ranks the codes of the vectors whose signs agree most with the query's", () => {
  const codes = new VectorCodes(DIMS);
  const stored = new Map<number, Float32Array>();
  for (let slot = 0; slot < 10_000; slot++) {
    stored.set(slot, vector(slot));
    codes.set(slot, vector(slot));
  }
  let found = 0;
  for (let q = 0; q < 10; q++) {
    // A stored vector's own signs agree with the query's entirely, so the shallowest prefilter finds it.
    assert.equal(codes.scan(vector(q * 997), 1, 64)[0], q * 997);
    const query = vector(2_000_000 + q);
    const truth = new Set(codeRanking(stored, query).slice(0, 10));
    const shallow = codes.scan(query, 10, 1_000);
    assert.equal(shallow.length, 10);
    found += shallow.filter((slot) => truth.has(slot)).length;
    assert.deepEqual(codes.scan(query, 10, 10_000), [...truth], "a depth of the size ranks every code");
  }
  // A tenth of near-random 100-d vectors, by their signs, holds most of the true nearest, but not all.
  const recall = found / 100;
  assert.ok(recall > 0.7 && recall < 1, `recall ${recall}`);
});

Deno.test("a scan among given slots ranks only those, by their codes", () => {
  const codes = new VectorCodes(DIMS);
  const stored = new Map<number, Float32Array>();
  for (let slot = 0; slot < 2_000; slot++) codes.set(slot, vector(slot));
  const among = [1_999, 3, 500, 77, 1_200, 640, 9, 1_000];
  for (const slot of among) stored.set(slot, vector(slot));
  const query = vector(3_000_000);
  assert.deepEqual(codes.scanAmong(query, 3, among), codeRanking(stored, query).slice(0, 3));
  assert.deepEqual(codes.scanAmong(query, 10, among), among, "fewer slots than asked for come back as given");
});

Deno.test("codes saved to a file and restored, mapped or read, scan as the codes they came from; misfits are refused", async () => {
  const codes = new VectorCodes(DIMS);
  // Slots past a block of sign bits, with a gap and a removal, as a restored index's free passage slots leave them.
  for (let slot = 0; slot < 1_500; slot++) if (slot % 7 !== 3) codes.set(slot, vector(slot));
  codes.clear(40);
  const holders = Array.from({ length: 1_500 }, (_, slot) => slot).filter((slot) => slot % 7 !== 3 && slot !== 40);
  const path = await Deno.makeTempFile();
  try {
    const file = codesFileBytes(codes.parts());
    await Deno.writeFile(path, file);
    const mapper = FileMapper.get();
    const saved = readSavedCodes(path, mapper)!;
    const restored = new VectorCodes(DIMS);
    assert.ok(!restored.restore(saved, [...holders, 40]), "a slot without a vector among them");
    assert.ok(!restored.restore(saved, holders.slice(1)), "a slot with a vector left out");
    assert.ok(restored.restore(saved, holders));
    assert.ok((await mappedFiles()).includes(path), "mapped");
    const read = new VectorCodes(DIMS);
    assert.ok(read.restore(readSavedCodes(path)!, holders), "read where there is no mapper");
    for (const copy of [restored, read]) {
      assert.equal(copy.size, codes.size);
      for (let seed = 0; seed < 5; seed++) {
        const query = vector(5_000_000 + seed);
        assert.deepEqual(copy.scan(query, 1_500), codes.scan(query, 1_500));
        assert.deepEqual(copy.scan(query, 10, 200), codes.scan(query, 10, 200));
      }
    }
    assert.ok(!new VectorCodes(DIMS + 1).restore(saved, holders), "other dimensions");
    assert.ok(!restored.restore(saved, holders), "codes that hold vectors already");
    const unplaced = new VectorCodes(DIMS);
    assert.ok(!unplaced.restore({ ...saved, place: () => false }, holders), "parts that cannot be placed");
    assert.equal(unplaced.size, 0);
    await Deno.writeFile(path, file.subarray(0, file.byteLength - 1));
    assert.equal(readSavedCodes(path, mapper), undefined, "cut short");
    await Deno.writeFile(path, file.map(() => Math.floor(Math.random() * 256)));
    assert.equal(readSavedCodes(path, mapper), undefined, "random bytes");
  } finally {
    await Deno.remove(path);
  }
});
