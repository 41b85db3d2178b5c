/**
 * The chart of searches per day, drawn as SVG: a bar of each day's searches with, at its foot, the part that found
 * nothing; a legend; and the same numbers as a table for those who do not see the bars.
 */
import { h } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";

/** The drawing's size in SVG units (it scales to its box), and the room its axis labels take. */
const WIDTH = 720;
const HEIGHT = 180;
const LEFT = 40;
const TOP = 10;
const BOTTOM = 22;

/** The share of a day's slot that its bar fills. */
const BAR_SHARE = 0.8;

/**
 * The bars of `days` (`{day, searches, noResultSearches}`, oldest first) in a plot of `width` × `height` whose top is
 * y = 0: each day's slot (`slotX`, `slot` wide), its bar's box and the box of the bar's part that found nothing; and
 * `max`, the count that a full-height bar stands for (at least 1).
 */
export function chartBars(days, { width, height }) {
  const max = Math.max(1, ...days.map((day) => day.searches));
  const slot = width / Math.max(1, days.length);
  const barWidth = round(Math.max(1, slot * BAR_SHARE));
  const bars = days.map((day, i) => {
    const barHeight = round(day.searches / max * height);
    const noResultHeight = round(day.noResultSearches / max * height);
    return {
      day: day.day,
      searches: day.searches,
      noResultSearches: day.noResultSearches,
      slotX: round(i * slot),
      x: round(i * slot + (slot - barWidth) / 2),
      width: barWidth,
      y: round(height - barHeight),
      height: barHeight,
      noResultY: round(height - noResultHeight),
      noResultHeight,
    };
  });
  return { max, slot: round(slot), bars };
}

function round(value) {
  return Math.round(value * 100) / 100;
}

/** The chart of `days` as a figure: the SVG (role "img", named by its summary), a legend and the numbers as a table. */
export function searchesChart(days) {
  const plot = { width: WIDTH - LEFT, height: HEIGHT - TOP - BOTTOM };
  const { max, slot, bars } = chartBars(days, plot);
  const drawing = svg(
    "svg",
    { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-label": chartSummary(days) },
    svg("text", { x: LEFT - 6, y: TOP + 4, "text-anchor": "end" }, String(max)),
    svg("text", { x: LEFT - 6, y: TOP + plot.height, "text-anchor": "end" }, "0"),
    svg("line", { class: "axis", x1: LEFT, y1: TOP + plot.height, x2: WIDTH, y2: TOP + plot.height }),
    days.length > 0 && svg("text", { x: LEFT, y: HEIGHT - 4 }, days[0].day),
    days.length > 1 && svg("text", { x: WIDTH, y: HEIGHT - 4, "text-anchor": "end" }, days.at(-1).day),
    svg(
      "g",
      { transform: `translate(${LEFT} ${TOP})` },
      bars.map((bar) =>
        svg(
          "g",
          {},
          svg("title", {}, `${bar.day}: ${bar.searches} searches, ${bar.noResultSearches} found nothing`),
          // The whole slot shows the title on hover, however short the bar.
          svg("rect", { class: "slot", x: bar.slotX, y: 0, width: slot, height: plot.height }),
          svg("rect", { class: "searches", x: bar.x, y: bar.y, width: bar.width, height: bar.height }),
          svg("rect", {
            class: "no-results",
            x: bar.x,
            y: bar.noResultY,
            width: bar.width,
            height: bar.noResultHeight,
          }),
        )
      ),
    ),
  );
  return h(
    "figure",
    { class: "chart" },
    drawing,
    h(
      "p",
      { class: "legend", "aria-hidden": "true" },
      h("span", { class: "swatch searches" }),
      "Searches",
      h("span", { class: "swatch no-results" }),
      "Found nothing",
    ),
    h(
      "details",
      {},
      h("summary", {}, "Show as a table"),
      h(
        "table",
        {},
        h("caption", {}, "Searches per day"),
        h("thead", {}, h("tr", {}, ["Day (UTC)", "Searches", "Found nothing"].map((name) => h("th", {}, name)))),
        h(
          "tbody",
          {},
          days.map((day) =>
            h(
              "tr",
              {},
              h("td", {}, day.day),
              h("td", { class: "number" }, String(day.searches)),
              h("td", { class: "number" }, String(day.noResultSearches)),
            )
          ),
        ),
      ),
    ),
  );
}

/** The chart's name for screen readers: the period, the totals and the busiest day. */
export function chartSummary(days) {
  if (days.length === 0) return "Searches per day: no days";
  const searches = days.reduce((sum, day) => sum + day.searches, 0);
  const noResults = days.reduce((sum, day) => sum + day.noResultSearches, 0);
  const busiest = days.reduce((best, day) => day.searches > best.searches ? day : best);
  const peak = searches === 0 ? "" : `; the most, ${busiest.searches}, on ${busiest.day}`;
  return `Searches per day from ${days[0].day} to ${days.at(-1).day}: ${searches} in all, ` +
    `${noResults} found nothing${peak}`;
}

/** An SVG element, as `h` makes HTML ones: attributes as given (none left out), children nodes or strings. */
function svg(tag, attributes, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  element.append(...children.flat().filter((child) => child !== false));
  return element;
}
