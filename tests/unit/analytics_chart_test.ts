/** Unit: the dashboard's chart of searches per day turns days into bars and names them for screen readers. */
import assert from "node:assert/strict";
import { chartBars, chartSummary } from "../../src/dashboard/assets/analytics_chart.js";

/** What chartBars returns (the module is plain JavaScript). */
interface Chart {
  max: number;
  slot: number;
  bars: {
    slotX: number;
    x: number;
    width: number;
    y: number;
    height: number;
    noResultY: number;
    noResultHeight: number;
  }[];
}

const DAYS = [
  { day: "2026-11-01", searches: 0, noResultSearches: 0 },
  { day: "2026-11-02", searches: 8, noResultSearches: 2 },
  { day: "2026-11-03", searches: 4, noResultSearches: 4 },
  { day: "2026-11-04", searches: 2, noResultSearches: 0 },
];

Deno.test("each day gets a slot, oldest first, and the busiest day's bar fills the plot's height", () => {
  const { max, slot, bars } = chartBars(DAYS, { width: 400, height: 100 }) as Chart;
  assert.equal(max, 8);
  assert.equal(slot, 100);
  assert.deepEqual(bars.map((bar) => bar.slotX), [0, 100, 200, 300]);
  assert.deepEqual(bars.map((bar) => [bar.x, bar.width]), [[10, 80], [110, 80], [210, 80], [310, 80]]);
  assert.deepEqual(bars.map((bar) => [bar.y, bar.height]), [[100, 0], [0, 100], [50, 50], [75, 25]]);
});

Deno.test("the part that found nothing sits at the foot of its bar, at the same scale", () => {
  const { bars } = chartBars(DAYS, { width: 400, height: 100 }) as Chart;
  assert.deepEqual(bars.map((bar) => [bar.noResultY, bar.noResultHeight]), [[100, 0], [75, 25], [50, 50], [100, 0]]);
});

Deno.test("days without searches draw empty bars at a scale of 1, and many days keep a visible width", () => {
  const quiet = chartBars([{ day: "2026-11-01", searches: 0, noResultSearches: 0 }], {
    width: 300,
    height: 50,
  }) as Chart;
  assert.equal(quiet.max, 1);
  assert.equal(quiet.bars[0]!.height, 0);
  const year = Array.from({ length: 1000 }, (_, i) => ({ day: `d${i}`, searches: i, noResultSearches: 0 }));
  const { bars } = chartBars(year, { width: 300, height: 50 }) as Chart;
  assert.ok(bars.every((bar) => bar.width >= 1));
  assert.deepEqual(chartBars([], { width: 300, height: 50 }), { max: 1, slot: 300, bars: [] });
});

Deno.test("the chart's name gives the period, the totals and the busiest day", () => {
  assert.equal(
    chartSummary(DAYS),
    "Searches per day from 2026-11-01 to 2026-11-04: 14 in all, 6 found nothing; the most, 8, on 2026-11-02",
  );
  assert.equal(
    chartSummary(DAYS.slice(0, 1)),
    "Searches per day from 2026-11-01 to 2026-11-01: 0 in all, 0 found nothing",
  );
  assert.equal(chartSummary([]), "Searches per day: no days");
});
