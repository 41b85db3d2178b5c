/** The passage that stands for a long document in a "more like this" search. */
import assert from "node:assert/strict";
import { centralPassage } from "../../src/actions/similar_to.ts";

Deno.test("centralPassage picks the passage nearest to the mean direction, and the first of one or two", () => {
  const vector = (...values: number[]) => Float32Array.from(values);
  assert.equal(centralPassage([vector(1, 0)]), 0);
  assert.equal(centralPassage([vector(1, 0), vector(0, 1)]), 0);
  assert.equal(centralPassage([vector(1, 0), vector(0.7, 0.7), vector(0, 1)]), 1);
  // Lengths do not count, only directions.
  assert.equal(centralPassage([vector(0, 5), vector(1, 1), vector(9, 0), vector(0.1, 0.9)]), 1);
});
