/** One index: its live summary, the search playground, its documents, and adding documents. */
import { formatTime, h, replaceChildren, statusNodes } from "./dom.js";
import { poll, REFRESH_MS } from "./poll.js";
import { searchSection } from "./search_section.js";
import { documentsSection } from "./documents_section.js";
import { addDocumentsSection } from "./add_documents_section.js";

/** The address of index `name`'s view with `query` filled in the playground and run in `mode`. */
export function playgroundHref(name, query, mode) {
  return `#/indexes/${encodeURIComponent(name)}?${new URLSearchParams({ query, mode })}`;
}

/**
 * Shows index `name` in `main`, with `search.query` (when not null) run in the playground in `search.mode`; returns
 * the view's disposer.
 */
export function renderIndexView(main, app, name, search = { query: null, mode: null }) {
  const summary = h("dl", { class: "summary" });
  const documents = documentsSection(app, name);
  const path = `#/indexes/${encodeURIComponent(name)}`;
  replaceChildren(
    main,
    h("h1", { tabindex: "-1" }, name),
    summary,
    h(
      "p",
      { class: "inline" },
      h("a", { href: `${path}/settings` }, "Settings: synonyms and pins"),
      h("a", { href: `${path}/analytics` }, "Analytics: searches and queries"),
    ),
    searchSection(app, name, search),
    documents.element,
    addDocumentsSection(app, name),
  );

  let lastVersion;
  let lastStatus;
  async function refresh() {
    try {
      const { data: index } = await app.call("getIndex", { indexName: name });
      replaceChildren(
        summary,
        [
          ["Model", `${index.model.id} ${index.model.version}`],
          ["Language", index.language],
          ["Documents", String(index.docCount)],
          ["Passages", String(index.passageCount)],
          ["Status", statusNodes(index)],
          ["Version", index.version],
          ["Updated", formatTime(index.updatedAt)],
          ...index.error === undefined ? [] : [["Error", index.error]],
        ].map(([term, value]) => h("div", {}, h("dt", {}, term), h("dd", {}, value))),
      );
      // The documents change when a queued write lands: show them again then.
      const settled = index.status === "Ready" || index.status === "Failed";
      if (lastVersion !== undefined && settled && (index.version !== lastVersion || lastStatus !== index.status)) {
        await documents.reload();
      }
      lastVersion = index.version;
      lastStatus = index.status;
    } catch (error) {
      app.report(error);
    }
  }

  documents.reload().catch((error) => app.report(error));
  return poll(refresh, REFRESH_MS);
}
