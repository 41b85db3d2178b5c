import assert from "node:assert/strict";
import { ParallelKernels, scanHelperCalls, scanHelperStarted } from "../src/vector_scan/scan_helper.ts";
import { scanKernels } from "../src/vector_scan/scan_kernels.ts";
import { VectorCodes } from "../src/vector_scan/vector_codes.ts";
import { unitVector } from "./_vectors.ts";

const PAGE_BYTES = 65_536;

/** Keeps this thread busy for `ms`, so that the helper thread takes the call before this thread would take it back. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** Writes int32 `distances` at `at` in `memory`. */
function writeDistances(memory: WebAssembly.Memory, at: number, distances: number[]): void {
  new Int32Array(memory.buffer, at, distances.length).set(distances);
}

Deno.test("the helper thread runs kernel calls over a shared memory, and still after it grows", async () => {
  assert.ok(await scanHelperStarted(), "a 2-core machine starts the helper thread");
  const memory = new WebAssembly.Memory({ initial: 1, maximum: 16, shared: true });
  const kernels = new ParallelKernels(memory, scanKernels(memory));
  const distances = Array.from({ length: 1_000 }, (_, i) => (i * 7) % 11);
  const calls = scanHelperCalls();
  // Rows below 3, and the first 5 at 3: the same list whichever thread runs it.
  const listAt = (at: number) => {
    writeDistances(memory, at, distances);
    const ids = at + 4 * distances.length;
    const count = kernels.alongside("within", [at, distances.length, 3, 5, ids], () => busy(20));
    return Array.from(new Int32Array(memory.buffer, ids, count));
  };
  const expected = distances.flatMap((distance, row) => distance < 3 ? [row] : []);
  const ties = distances.flatMap((distance, row) => distance === 3 ? [row] : []).slice(0, 5);
  const want = [...expected, ...ties].sort((a, b) => a - b);
  assert.deepEqual(listAt(0), want);
  // Past the first page: a helper that did not see the memory grow would trap, and the call would run here instead.
  memory.grow(2);
  assert.deepEqual(listAt(2 * PAGE_BYTES), want);
  assert.equal(scanHelperCalls() - calls, 2, "the helper ran both calls");
});

Deno.test("a scan split with the helper thread ranks every code as one thread would", async () => {
  assert.ok(await scanHelperStarted());
  const dims = 64;
  const codes = new VectorCodes(dims);
  const vectors = Array.from({ length: 20_000 }, (_, i) => new Float32Array(unitVector(i, dims, false)));
  vectors.forEach((vector, slot) => codes.set(slot, vector));
  const calls = scanHelperCalls();
  // A half that the helper has not begun when this thread is done is taken back and run here, so on a loaded machine a
  // round can pass without the helper: the rounds go on until it has taken part, for at most 10 s.
  const until = Date.now() + 10_000;
  for (let round = 0; round === 0 || (scanHelperCalls() === calls && Date.now() < until); round++) {
    for (let q = 0; q < 5; q++) {
      const query = new Float32Array(unitVector(5_000_000 + q, dims, false));
      const self = vectors[q * 3_001]!;
      // Each vector is nearest to itself, wherever its row falls: the second half is the helper's.
      assert.equal(codes.scan(self, 1)[0], q * 3_001);
      assert.equal(codes.scan(self, 1, 2_000)[0], q * 3_001);
      const all = codes.scan(query, 50);
      const deep = codes.scan(query, 50, 19_999);
      assert.deepEqual(deep.slice(0, 10), all.slice(0, 10), "a prefilter of nearly every row ranks as a full scan");
    }
  }
  assert.ok(scanHelperCalls() > calls, "the helper took part");
});
