/**
 * An index's search analytics (`searchAnalytics`): searches and latency, searches per day, the top queries with their
 * click-through, and the queries that found nothing, each with "Try it", "Add synonym…" and "Pin results…".
 */
import { h, replaceChildren, whileDisabled } from "./dom.js";
import { searchesChart } from "./analytics_chart.js";
import { addSynonym, fixesNote, pinResults } from "./query_fixes.js";
import { playgroundHref } from "./index_view.js";

const count = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });
const percent = new Intl.NumberFormat(undefined, { style: "percent", maximumFractionDigits: 0 });

/** Shows the analytics of index `name` in `main`; returns the view's disposer. */
export function renderAnalyticsView(main, app, name) {
  const summary = h("dl", { class: "summary" });
  const chart = h("div");
  const topQueries = h("div");
  const noResultQueries = h("div");
  const status = h("p", { role: "status", class: "status" }, "Loading…");
  const fixStatus = h("p", { role: "status", class: "status" });
  const refresh = h("button", { type: "button", onclick: () => whileDisabled([refresh], load) }, "Refresh");
  let disposed = false;

  async function load() {
    try {
      const [{ data: report }, { data: index }] = await Promise.all([
        app.call("searchAnalytics", { indexName: name }),
        app.call("getIndex", { indexName: name }),
      ]);
      if (disposed) return;
      app.clearAlert();
      show(report, index.settings);
      status.textContent = `Updated at ${new Date().toLocaleTimeString()}`;
    } catch (error) {
      app.report(error);
    }
  }

  function show(report, settings) {
    const { days } = report;
    replaceChildren(
      summary,
      [
        ["Period (UTC)", days.length === 0 ? "—" : `${days[0].day} to ${days.at(-1).day}`],
        ["Searches", count.format(report.searches)],
        ["Found nothing", foundNothing(report)],
        ["p50", milliseconds(report.p50Ms)],
        ["p95", milliseconds(report.p95Ms)],
      ].map(([term, value]) => h("div", {}, h("dt", {}, term), h("dd", {}, value))),
    );
    replaceChildren(chart, searchesChart(days));
    replaceChildren(topQueries, topQueriesTable(report.topQueries));
    replaceChildren(noResultQueries, noResultTable(report.noResultQueries, settings));
  }

  function noResultTable(queries, settings) {
    if (queries.length === 0) return h("p", { class: "note" }, "Every search in this period found something.");
    return h(
      "table",
      {},
      h("caption", {}, "No-result queries"),
      h("thead", {}, h("tr", {}, ["Query", "Searches", "In settings", "Actions"].map((name) => h("th", {}, name)))),
      h("tbody", {}, queries.map(({ query, count: searches }) => noResultRow(query, searches, settings))),
    );
  }

  function noResultRow(query, searches, settings) {
    const note = h("td", {}, fixesNote(settings, query) || "—");
    const buttons = [];
    const fixButton = (label, accessibleName, fix) =>
      h("button", {
        type: "button",
        class: "link",
        "aria-label": accessibleName,
        onclick: () =>
          whileDisabled(buttons, async () => {
            try {
              const changed = await fix(app, name, query);
              if (changed === null) return;
              app.clearAlert();
              note.textContent = fixesNote(changed, query) || "—";
              fixStatus.textContent = `Saved the settings of ${name} for "${query}"`;
            } catch (error) {
              app.report(error);
            }
          }),
      }, label);
    buttons.push(
      fixButton("Add synonym…", `Add synonym for ${query}`, addSynonym),
      fixButton("Pin results…", `Pin results for ${query}`, pinResults),
    );
    return h(
      "tr",
      {},
      h("td", {}, query),
      h("td", { class: "number" }, count.format(searches)),
      note,
      h(
        "td",
        {},
        h(
          "div",
          { class: "inline" },
          // Vector and hybrid searches find every document that passes their filter: a query that found nothing was
          // most likely a full-text one.
          h("a", { href: playgroundHref(name, query, "fulltext"), "aria-label": `Try it: ${query}` }, "Try it"),
          buttons,
        ),
      ),
    );
  }

  replaceChildren(
    main,
    h("h1", { tabindex: "-1" }, `Analytics of ${name}`),
    h("p", {}, h("a", { href: `#/indexes/${encodeURIComponent(name)}` }, `Back to ${name}`)),
    h(
      "section",
      { class: "card" },
      h("h2", {}, "Searches"),
      summary,
      chart,
      h("div", { class: "toolbar" }, refresh, status),
    ),
    h(
      "section",
      { class: "card" },
      h("h2", {}, "Top queries"),
      topQueries,
    ),
    h("section", { class: "card" }, h("h2", {}, "No-result queries"), noResultQueries, fixStatus),
  );
  load();
  return () => disposed = true;
}

/** The most searched queries, with the click columns when the application reports clicks, else a note saying so. */
function topQueriesTable(queries) {
  if (queries.length === 0) return h("p", { class: "note" }, "No searches with a query in this period.");
  const clicked = queries.some((query) => query.clicks > 0);
  const headings = ["Query", "Searches", "Avg results", ...clicked ? ["Clicks", "Click-through", "Mean position"] : []];
  const table = h(
    "table",
    {},
    h("caption", {}, "Top queries"),
    h("thead", {}, h("tr", {}, headings.map((heading) => h("th", {}, heading)))),
    h(
      "tbody",
      {},
      queries.map((query) =>
        h(
          "tr",
          {},
          h("td", {}, query.query),
          numberCell(count.format(query.count)),
          numberCell(count.format(query.avgResults)),
          clicked && numberCell(count.format(query.clicks)),
          clicked && numberCell(percent.format(query.clickThroughRate)),
          clicked && numberCell(query.meanClickPosition === null ? "—" : count.format(query.meanClickPosition)),
        )
      ),
    ),
  );
  return clicked
    ? table
    : [table, h("p", { class: "note" }, "Click-through shows once the application reports clicks (recordClick).")];
}

function numberCell(text) {
  return h("td", { class: "number" }, text);
}

function foundNothing(report) {
  if (report.searches === 0) return "0";
  return `${count.format(report.noResultSearches)} (${percent.format(report.noResultSearches / report.searches)})`;
}

function milliseconds(ms) {
  return ms === null ? "—" : `${count.format(ms)} ms`;
}
