/** The memory budget tells of every state it lets go, and of no state that a write updated in place. */
import assert from "node:assert/strict";
import { type CachedIndex, MemoryBudget } from "../../src/index_state/memory_budget.ts";
import { Metrics } from "../../src/observability/metrics.ts";
import { SearchIndex } from "../../src/search/search_index.ts";

function indexOf(docs: number): SearchIndex {
  const index = new SearchIndex({ revision: 1 });
  index.apply(
    Array.from({ length: docs }, (_, i) => ({ id: `d${i}`, doc: { text: `word${i} shared`, passages: [] } })),
    { revision: 1 },
  );
  return index;
}

Deno.test("the budget tells of states it evicts, drops or finds too large, and of a state a reload replaced", async () => {
  const evicted: CachedIndex[] = [];
  const budget = new MemoryBudget(
    { budgetBytes: 1024 * 1024, capacity: 2 },
    new Metrics(),
    (entry) => evicted.push(entry),
  );
  const small = indexOf(100);
  const store = async (id: string, index: SearchIndex) => {
    const entry = budget.store(id, 1, Promise.resolve(index));
    budget.measure({ id, name: id }, entry, await entry.ready);
    return entry;
  };
  const a = await store("a", small);
  const b = await store("b", indexOf(100));
  // Beyond the count of states: the least recently used goes.
  await store("c", indexOf(100));
  assert.deepEqual(evicted, [a]);
  // Updated in place (the same state, a newer revision): nothing is let go.
  const c = budget.peek("c")!;
  const updated = budget.store("c", 2, c.ready);
  await Promise.resolve();
  assert.deepEqual(evicted, [a]);
  // Reloaded as a new state: the replaced one is let go once both are ready.
  budget.store("c", 3, Promise.resolve(indexOf(100)));
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(evicted, [a, updated]);
  budget.delete("b");
  assert.deepEqual(evicted.slice(2), [b]);
  const huge = budget.store("h", 1, Promise.resolve(indexOf(20_000)));
  assert.throws(() => budget.measure({ id: "h", name: "h" }, huge, indexOf(20_000)), /SEARCH_CACHE_MB/);
  assert.equal(evicted.at(-1), huge);
});
