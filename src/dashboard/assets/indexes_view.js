/** The project's indexes: a live table paged by the API's cursor, deletion with a confirmation, and a create form. */
import { field, formatBytes, formatTime, h, replaceChildren, statusNodes, whileDisabled } from "./dom.js";
import { confirmAction } from "./confirm_dialog.js";
import { poll, REFRESH_MS } from "./poll.js";
import { Pager } from "./pager.js";

const PAGE_SIZE = 20;

/** Shows the view in `main`; returns its disposer. */
export function renderIndexesView(main, app) {
  const body = h("tbody");
  const pager = new Pager(load, (error) => app.report(error));
  const status = h("p", { role: "status", class: "status" });
  replaceChildren(
    main,
    h("h1", { tabindex: "-1" }, "Indexes"),
    h(
      "table",
      {},
      h("caption", {}, "Indexes"),
      h(
        "thead",
        {},
        h("tr", {}, ["Name", "Model", "Docs", "Status", "Size", "Updated", "Actions"].map((name) => h("th", {}, name))),
      ),
      body,
    ),
    pager.controls,
    createSection(app, status, () => pager.reload()),
  );

  /** The rows on show, by index name, so that a refresh updates cells in place and keeps the keyboard focus. */
  let rows = new Map();

  async function load(cursor) {
    const { data, nextCursor } = await app.call("listIndexes", { options: { limit: PAGE_SIZE, cursor } });
    const names = data.map((index) => index.name);
    if (names.join("\n") !== [...rows.keys()].join("\n") || names.length !== rows.size) {
      rows = new Map(data.map((index) => [index.name, indexRow(index)]));
      replaceChildren(body, [...rows.values()].map((row) => row.element));
      if (data.length === 0) body.append(h("tr", {}, h("td", { colspan: 7 }, "No indexes yet: create one below.")));
    }
    for (const index of data) rows.get(index.name).update(index);
    return nextCursor;
  }

  function indexRow(index) {
    const cells = {
      model: h("td"),
      docs: h("td", { class: "number" }),
      status: h("td"),
      size: h("td"),
      updated: h("td"),
    };
    const element = h(
      "tr",
      {},
      h("td", {}, h("a", { href: `#/indexes/${encodeURIComponent(index.name)}` }, index.name)),
      cells.model,
      cells.docs,
      cells.status,
      cells.size,
      cells.updated,
      h(
        "td",
        {},
        h("button", {
          type: "button",
          class: "danger",
          "aria-label": `Delete index ${index.name}`,
          onclick: () => remove(index.name),
        }, "Delete"),
      ),
    );
    return {
      element,
      update(index) {
        cells.model.textContent = `${index.model.id} ${index.model.version}`;
        cells.docs.textContent = String(index.docCount);
        replaceChildren(cells.status, statusNodes(index));
        cells.size.textContent = formatBytes(index.memoryBytes);
        cells.updated.textContent = formatTime(index.updatedAt);
      },
    };
  }

  async function remove(name) {
    if (!await confirmAction(`Delete index ${name}?`, "Delete")) return;
    try {
      await app.call("deleteIndex", { indexName: name });
      status.textContent = `Deleted index "${name}"`;
      await pager.reload();
      main.querySelector("h1").focus();
    } catch (error) {
      app.report(error);
    }
  }

  return poll(() => pager.reload().catch((error) => app.report(error)), REFRESH_MS);
}

function createSection(app, status, reload) {
  const settings = app.settings ?? { models: [], languages: [] };
  const name = h("input", { name: "name", required: true, maxlength: 256, autocomplete: "off" });
  const model = h(
    "select",
    { name: "model" },
    settings.models.map((id) => h("option", { value: id, selected: id === settings.defaultModel }, id)),
  );
  const language = h(
    "select",
    { name: "language" },
    settings.languages.map((id) => h("option", { value: id, selected: id === settings.defaultLanguage }, id)),
  );
  const maxTokens = h("input", { name: "maxTokens", type: "number", min: 1, step: 1 });
  const overlapTokens = h("input", { name: "overlapTokens", type: "number", min: 0, step: 1 });
  const submit = h("button", { type: "submit" }, "Create index");

  async function onsubmit(event) {
    event.preventDefault();
    const passages = {
      ...maxTokens.value === "" ? {} : { maxTokens: Number(maxTokens.value) },
      ...overlapTokens.value === "" ? {} : { overlapTokens: Number(overlapTokens.value) },
    };
    const options = { language: language.value, ...Object.keys(passages).length === 0 ? {} : { passages } };
    await whileDisabled([submit], async () => {
      try {
        await app.call("createIndex", { indexName: name.value, modelId: model.value, docs: [], options });
        status.textContent = `Created index "${name.value}"`;
        app.clearAlert();
        name.value = "";
        await reload();
      } catch (error) {
        app.report(error);
      }
    });
  }

  return h(
    "section",
    { class: "card" },
    h("h2", {}, "Create an index"),
    h(
      "form",
      { class: "grid", onsubmit },
      field("Name", name),
      field("Model", model),
      field("Language", language, "Full-text search stems and drops stop words in it"),
      field("Passage max tokens", maxTokens, "Optional: how long texts split into passages"),
      field("Passage overlap tokens", overlapTokens, "Optional"),
      h("div", { class: "actions" }, submit),
    ),
    status,
  );
}
