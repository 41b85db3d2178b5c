/** The queue of passages waiting for a graph, against a `Set` that does the same. */
import assert from "node:assert/strict";
import fc from "fast-check";
import { PendingPassages } from "../../src/search/pending_passages.ts";

type Step = { kind: "add" | "delete"; slot: number } | { kind: "take"; count: number };

const steps = fc.array(
  fc.oneof(
    fc.record({ kind: fc.constantFrom("add" as const, "delete" as const), slot: fc.nat(300) }),
    fc.record({ kind: fc.constant("take" as const), count: fc.integer({ min: 1, max: 40 }) }),
  ),
  { minLength: 500, maxLength: 3_000 },
);

Deno.test("waiting passages: the same members as a Set, each taken once, the oldest first", () => {
  fc.assert(
    fc.property(steps, (run: Step[]) => {
      const pending = new PendingPassages();
      const model = new Set<number>();
      for (const step of run) {
        if (step.kind === "take") {
          // A flush: the oldest `count` join the graph and stop waiting.
          const taken = pending.oldest(step.count);
          assert.equal(taken.length, Math.min(step.count, model.size));
          assert.equal(new Set(taken).size, taken.length, "each once");
          for (const slot of taken) assert.ok(model.delete(slot) && pending.delete(slot));
        } else if (step.kind === "add") {
          pending.add(step.slot);
          model.add(step.slot);
        } else {
          assert.equal(pending.delete(step.slot), model.delete(step.slot));
        }
        assert.equal(pending.size, model.size);
      }
      assert.deepEqual(new Set(pending.oldest()), model);
      for (let slot = 0; slot <= 300; slot++) assert.equal(pending.has(slot), model.has(slot));
    }),
    { numRuns: 200 },
  );
});

Deno.test("waiting passages come out in the order they came, and a long queue of stale entries is rebuilt", () => {
  const pending = new PendingPassages();
  pending.addAll([5, 3, 9, 1]);
  assert.deepEqual(pending.oldest(), [5, 3, 9, 1]);
  assert.deepEqual(pending.oldest(2), [5, 3]);
  pending.delete(3);
  assert.deepEqual(pending.oldest(2), [5, 9]);
  // Far more removed than waiting: the queue is rebuilt from what waits, in its order.
  pending.addAll(Array.from({ length: 5_000 }, (_, i) => 100 + i));
  for (let i = 0; i < 4_990; i++) pending.delete(100 + i);
  assert.deepEqual(pending.oldest(), [5, 9, 1, ...Array.from({ length: 10 }, (_, i) => 5_090 + i)]);
  assert.equal(pending.size, 13);
});
