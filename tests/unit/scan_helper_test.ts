import assert from "node:assert/strict";
import { ParallelKernels, scanHelperCalls, scanHelperStarted } from "../../src/vector_scan/scan_helper.ts";
import { scanKernels } from "../../src/vector_scan/scan_kernels.ts";
import { VectorCodes } from "../../src/vector_scan/vector_codes.ts";
import { unitVector } from "../_vectors.ts";

const PAGE_BYTES = 65_536;

/** Writes int32 `distances` at `at` in `memory`. */
function writeDistances(memory: WebAssembly.Memory, at: number, distances: Int32Array): void {
  new Int32Array(memory.buffer, at, distances.length).set(distances);
}

Deno.test("the helper thread runs chunks of kernel passes over a shared memory, and still after it grows", async () => {
  assert.ok(await scanHelperStarted(), "a 2-core machine starts the helper thread");
  const rows = 1_000_000;
  const memory = new WebAssembly.Memory({ initial: 130, maximum: 400, shared: true });
  const kernels = new ParallelKernels(memory, scanKernels(memory));
  const distances = Int32Array.from({ length: rows }, (_, i) => (i * 7) % 11);
  const want = Array.from(distances.keys()).filter((row) => distances[row]! < 3);
  // The rows below 3, listed chunk by chunk: the same list whichever thread runs each chunk.
  const listAt = (at: number) => {
    writeDistances(memory, at, distances);
    const ids = at + 4 * rows;
    const { starts, results } = kernels.inChunks("within", rows, 1_000, (from, to) => [
      at + 4 * from,
      to - from,
      3,
      0,
      ids + 4 * from,
    ]);
    const listed = new Int32Array(memory.buffer, ids, rows);
    return starts.flatMap((start, chunk) =>
      Array.from(listed.subarray(start, start + results[chunk]!), (row) => row + start)
    );
  };
  // A pass that this thread finishes before the helper wakes runs here whole: rounds go on until the helper took part.
  const helped = (at: number) => {
    const calls = scanHelperCalls();
    const until = Date.now() + 10_000;
    while (Date.now() < until) {
      assert.deepEqual(listAt(at), want);
      if (scanHelperCalls() > calls) return true;
    }
    return false;
  };
  assert.ok(helped(0), "the helper ran chunks");
  // Past the first pages: a helper that did not see the memory grow would trap, and its chunks would run here instead.
  memory.grow(150);
  assert.ok(helped(135 * PAGE_BYTES), "the helper ran chunks of the grown memory");
});

Deno.test("a scan split with the helper thread ranks every code as one thread would", async () => {
  assert.ok(await scanHelperStarted());
  const dims = 64;
  const codes = new VectorCodes(dims);
  const vectors = Array.from({ length: 20_000 }, (_, i) => new Float32Array(unitVector(i, dims, false)));
  vectors.forEach((vector, slot) => codes.set(slot, vector));
  const calls = scanHelperCalls();
  // On a loaded machine this thread can run every chunk before the helper wakes: the rounds go on until it has taken
  // part, for at most 10 s.
  const until = Date.now() + 10_000;
  for (let round = 0; round === 0 || (scanHelperCalls() === calls && Date.now() < until); round++) {
    for (let q = 0; q < 5; q++) {
      const query = new Float32Array(unitVector(5_000_000 + q, dims, false));
      const self = vectors[q * 3_001]!;
      // Each vector is nearest to itself, wherever its row falls, whichever thread ran its chunk.
      assert.equal(codes.scan(self, 1)[0], q * 3_001);
      assert.equal(codes.scan(self, 1, 2_000)[0], q * 3_001);
      const all = codes.scan(query, 50);
      const deep = codes.scan(query, 50, 19_999);
      assert.deepEqual(deep.slice(0, 10), all.slice(0, 10), "a prefilter of nearly every row ranks as a full scan");
    }
  }
  assert.ok(scanHelperCalls() > calls, "the helper took part");
});
