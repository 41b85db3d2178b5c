/** The project at a glance: its indexes, their documents in total, and the server's health. */
import { getJson } from "./api.js";
import { h, replaceChildren, statusNodes } from "./dom.js";

/** Pages asked for at once when listing every index. */
const PAGE_SIZE = 100;

/** Shows the view in `main`; returns its disposer. */
export function renderProjectView(main, app) {
  const totals = h("p", {}, "Loading…");
  const body = h("tbody");
  const health = h("ul", { class: "plain" });
  replaceChildren(
    main,
    h("h1", { tabindex: "-1" }, `Project ${app.projectId}`),
    totals,
    h(
      "table",
      {},
      h("caption", {}, "Project indexes"),
      h("thead", {}, h("tr", {}, ["Name", "Docs", "Status"].map((name) => h("th", {}, name)))),
      body,
    ),
    h("section", { class: "card" }, h("h2", {}, "Server"), health),
    h(
      "p",
      { class: "note" },
      "Keys with fewer rights are created, listed and deleted in ",
      h("a", { href: "#/keys" }, "Keys"),
      ". The project key is rotated with the CLI: deno task cli project rotate-key <project>",
    ),
  );
  let disposed = false;

  (async () => {
    const indexes = [];
    let cursor;
    do {
      const limit = Math.min(PAGE_SIZE, app.settings?.maxDocsPerRequest ?? PAGE_SIZE);
      const page = await app.call("listIndexes", { options: { limit, cursor } });
      indexes.push(...page.data);
      cursor = page.nextCursor;
    } while (cursor !== undefined && !disposed);
    const docs = indexes.reduce((sum, index) => sum + index.docCount, 0);
    totals.textContent = `${indexes.length} indexes, ${docs} documents`;
    replaceChildren(
      body,
      indexes.map((index) =>
        h(
          "tr",
          {},
          h("td", {}, h("a", { href: `#/indexes/${encodeURIComponent(index.name)}` }, index.name)),
          h("td", { class: "number" }, String(index.docCount)),
          h("td", {}, statusNodes(index)),
        )
      ),
    );
  })().catch((error) => app.report(error));

  (async () => {
    const [live, ready] = await Promise.all([getJson("/healthz"), getJson("/readyz")]);
    replaceChildren(
      health,
      h(
        "li",
        {},
        `Health: ${live.data?.status ?? `HTTP ${live.status}`}`,
        live.data?.pid && ` (process ${live.data.process}, pid ${live.data.pid})`,
      ),
      h(
        "li",
        {},
        `Readiness: ${ready.data?.status ?? `HTTP ${ready.status}`}`,
        ready.data?.unavailable && ` (unavailable: ${ready.data.unavailable.join(", ")})`,
      ),
    );
  })().catch((error) => app.report(error));

  return () => disposed = true;
}
