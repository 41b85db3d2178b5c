/** An index's documents: a table paged by cursor, expandable texts, deletion of a selection, and lookup by id. */
import { field, h, replaceChildren, shorten } from "./dom.js";
import { confirmAction } from "./confirm_dialog.js";
import { Pager } from "./pager.js";

/** How much of a text a row shows before "Show full text". */
const SHORT_TEXT = 160;

/** The section for index `name`: `element` to place, and `reload()` to show the current page again. */
export function documentsSection(app, name) {
  const body = h("tbody");
  const selected = new Set();
  const pager = new Pager(load, (error) => app.report(error));
  const pageSize = h(
    "select",
    { name: "pageSize", onchange: () => pager.first().catch((error) => app.report(error)) },
    [10, 20, 50, 100].filter((size) => size <= (app.settings?.maxDocsPerRequest ?? 100))
      .map((size) => h("option", { value: size, selected: size === 20 }, String(size))),
  );
  const deleteButton = h("button", { type: "button", class: "danger", disabled: true, onclick: removeSelected }, [
    "Delete selected",
  ]);
  const status = h("p", { role: "status", class: "status" });

  async function load(cursor) {
    const options = { limit: Number(pageSize.value), ...cursor === undefined ? {} : { cursor } };
    const { data, nextCursor } = await app.call("getDocs", { indexName: name, options });
    selected.clear();
    deleteButton.disabled = true;
    replaceChildren(body, data.map(documentRow));
    if (data.length === 0) body.append(h("tr", {}, h("td", { colspan: 4 }, "No documents yet: add some below.")));
    return nextCursor;
  }

  function documentRow(doc) {
    const select = h("input", {
      type: "checkbox",
      "aria-label": `Select ${doc.id}`,
      onchange: () => {
        if (select.checked) selected.add(doc.id);
        else selected.delete(doc.id);
        deleteButton.disabled = selected.size === 0;
      },
    });
    return h(
      "tr",
      {},
      h("td", {}, select),
      h("td", { class: "id" }, doc.id),
      h("td", {}, expandableText(doc.text)),
      h("td", {}, metadataText(doc.metadata)),
    );
  }

  async function removeSelected() {
    const ids = [...selected];
    if (!await confirmAction(`Delete ${ids.length} documents?`, "Delete")) return;
    try {
      const { data } = await app.call("deleteDocs", { indexName: name, docIds: ids });
      status.textContent = `Deleted ${data.deleted ?? ids.length} documents`;
      await pager.reload();
    } catch (error) {
      app.report(error);
    }
  }

  const element = h(
    "section",
    { class: "card" },
    h("h2", {}, "Documents"),
    h(
      "table",
      {},
      h("caption", {}, "Documents"),
      h("thead", {}, h("tr", {}, ["Select", "ID", "Text", "Metadata"].map((column) => h("th", {}, column)))),
      body,
    ),
    h("div", { class: "toolbar" }, field("Page size", pageSize), pager.controls, deleteButton),
    status,
    lookupForm(app, name),
  );
  return { element, reload: () => pager.reload() };
}

/** A text shortened to a line or two, with a button that shows all of it and back. */
function expandableText(text) {
  if (text.length <= SHORT_TEXT) return h("span", { class: "text" }, text);
  const shown = h("span", { class: "text" }, shorten(text, SHORT_TEXT));
  const toggle = h("button", {
    type: "button",
    class: "link",
    "aria-expanded": "false",
    onclick: () => {
      const expanded = toggle.getAttribute("aria-expanded") !== "true";
      toggle.setAttribute("aria-expanded", String(expanded));
      toggle.textContent = expanded ? "Show less" : "Show full text";
      shown.textContent = expanded ? text : shorten(text, SHORT_TEXT);
    },
  }, "Show full text");
  return h("span", {}, shown, " ", toggle);
}

/** Metadata as the JSON text it is. */
export function metadataText(metadata) {
  return metadata === undefined ? "" : h("code", { class: "metadata" }, JSON.stringify(metadata));
}

function lookupForm(app, name) {
  const id = h("input", { name: "docId", required: true, autocomplete: "off" });
  const result = h("div", {});
  async function onsubmit(event) {
    event.preventDefault();
    replaceChildren(result);
    try {
      const { data } = await app.call("getDocs", { indexName: name, options: { docIds: [id.value] } });
      const doc = data[0];
      replaceChildren(
        result,
        doc === undefined ? h("p", { role: "status" }, `No document with id "${id.value}"`) : h(
          "section",
          { "aria-label": "Looked-up document", class: "looked-up" },
          h("h3", {}, doc.id),
          h("p", { class: "text" }, doc.text),
          metadataText(doc.metadata),
        ),
      );
    } catch (error) {
      app.report(error);
    }
  }
  return h(
    "form",
    { class: "inline", onsubmit },
    field("Document ID", id),
    h("button", { type: "submit" }, "Look up"),
    result,
  );
}
