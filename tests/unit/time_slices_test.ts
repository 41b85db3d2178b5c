/**
 * Background work in time slices gives way to requests and jobs, also while they wait on the store, and runs at full
 * speed while they wait for it.
 */
import assert from "node:assert/strict";
import { asForeground, awaitBackground, TimeSlices } from "../../src/util/time_slices.ts";

/** Runs busy slices of `sliceMs` until `until` resolves or `count` slices have run; returns how many ran. */
async function busySlices(
  sliceMs: number,
  options: { until?: Promise<void>; count?: number; share?: number },
): Promise<number> {
  let stopped = false;
  options.until?.then(() => stopped = true);
  const slices = new TimeSlices(sliceMs, options.share);
  let ran = 0;
  while (!stopped && ran < (options.count ?? Infinity)) {
    while (!slices.due) {
      // Work that holds the event loop, as a batch of graph inserts does.
    }
    ran++;
    await slices.next();
  }
  return ran;
}

Deno.test("background slices give way to foreground work whose steps each wait on the store", async () => {
  using kv = await Deno.openKv(":memory:");
  const reads = 40;
  const { promise: done, resolve } = Promise.withResolvers<void>();
  const background = busySlices(10, { until: done });
  await asForeground(async () => {
    for (let i = 0; i < reads; i++) await kv.get(["doc", i]);
  });
  resolve();
  const slices = await background;
  // Each read's turn ran a 10 ms slice before this work counted as foreground: 40 slices for 40 reads.
  assert.ok(slices <= reads / 4, `${slices} background slices ran during ${reads} reads`);
});

Deno.test("foreground work that waits for background work does not slow it down", async () => {
  const started = performance.now();
  await asForeground(() => awaitBackground(busySlices(10, { count: 20 })));
  const ms = performance.now() - started;
  // Held to a quarter of the time, 20 slices of 10 ms would take 800 ms.
  assert.ok(ms < 500, `20 slices of 10 ms took ${ms.toFixed(0)} ms`);
});

Deno.test("background slices take their share of a busy process's time: a quarter, or less when asked", async () => {
  const ran = async (share?: number) => {
    const { promise: done, resolve } = Promise.withResolvers<void>();
    const background = busySlices(10, { until: done, share });
    await asForeground(() => new Promise((resolve) => setTimeout(resolve, 1_000)));
    resolve();
    return await background;
  };
  const quarter = await ran();
  const tenth = await ran(0.1);
  // A second holds about 25 slices of 10 ms at a quarter, and 10 at a tenth.
  assert.ok(quarter >= 15 && quarter <= 30, `${quarter} slices at a quarter`);
  assert.ok(tenth <= 14 && tenth < quarter / 1.6, `${tenth} slices at a tenth, ${quarter} at a quarter`);
});

Deno.test("background work that runs only when idle waits while foreground work is under way, then goes on", async () => {
  const { promise: finish, resolve: finishForeground } = Promise.withResolvers<void>();
  const foreground = asForeground(() => finish);
  const slices = new TimeSlices(0);
  let ran = false;
  const idle = slices.next({ whenIdle: true }).then(() => ran = true);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(ran, false, "no idle turn while a request is under way");
  finishForeground();
  await foreground;
  await idle;
  assert.equal(ran, true);
});

Deno.test("idle work stops waiting once it is no longer wanted, while foreground work goes on", async () => {
  const { promise: finish, resolve: finishForeground } = Promise.withResolvers<void>();
  const foreground = asForeground(() => finish);
  let wanted = true;
  let returned = false;
  const idle = new TimeSlices(0).next({ whenIdle: true, giveUp: () => !wanted }).then(() => returned = true);
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(returned, false, "still waiting for an idle turn");
  wanted = false;
  await idle;
  assert.equal(returned, true, "it gave up although the process is still busy");
  finishForeground();
  await foreground;
});
