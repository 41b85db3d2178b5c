import assert from "node:assert/strict";
import { TermHolders } from "../../src/fulltext/term_holders.ts";

/** A small deterministic generator of integers below `bound`. */
function randomBelow(seed: number): (bound: number) => number {
  let state = seed;
  return (bound) => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state % bound;
  };
}

Deno.test("term holders list what was added and not removed, through removals that wait and slots added back", () => {
  const next = randomBelow(7);
  const holders = new TermHolders();
  const model = new Set<number>();
  for (let step = 0; step < 20_000; step++) {
    const slot = next(300);
    // Mostly changes, now and then a read, so that removals both wait and get applied.
    if (model.has(slot)) {
      holders.delete(slot);
      model.delete(slot);
    } else {
      holders.add(slot);
      model.add(slot);
    }
    assert.equal(holders.size, model.size);
    if (next(10) === 0) assert.deepEqual([...holders.slots()].sort((a, b) => a - b), [...model].sort((a, b) => a - b));
  }
});

Deno.test("a slot removed and added back before a read is listed once", () => {
  const holders = new TermHolders([1, 2, 3, 4, 5, 6, 7, 8]);
  holders.delete(3);
  holders.add(3);
  holders.delete(5);
  assert.equal(holders.size, 7);
  assert.deepEqual([...holders.slots()], [1, 2, 3, 4, 6, 7, 8]);
});
