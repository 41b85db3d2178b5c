/** The project's keys: a table with their scopes and last use, deletion with a confirmation, and a create form. */
import { formatTime, h, replaceChildren } from "./dom.js";
import { confirmAction } from "./confirm_dialog.js";
import { createKeySection, showSecret } from "./key_form.js";

const COLUMNS = ["ID", "Description", "Actions", "Indexes", "Expires", "Rate", "Created", "Last used", "Delete"];

/** Shows the view in `main`; returns its disposer. */
export function renderKeysView(main, app) {
  const body = h("tbody", {}, h("tr", {}, h("td", { colspan: COLUMNS.length }, "Loading…")));
  const status = h("p", { role: "status", class: "status" });
  const secretArea = h("div");
  /** The key whose secret is on show: deleting it hides the secret, which then opens nothing. */
  let shownKeyId;
  let disposed = false;
  replaceChildren(
    main,
    h("h1", { tabindex: "-1" }, "Keys"),
    h(
      "p",
      { class: "note" },
      "A key calls the API with only the actions and indexes it is given, until it expires or is deleted. ",
      "The project key can do everything; rotate it with the CLI: deno task cli project rotate-key <project>",
    ),
    h(
      "table",
      {},
      h("caption", {}, "Keys"),
      h("thead", {}, h("tr", {}, COLUMNS.map((name) => h("th", {}, name)))),
      body,
    ),
    status,
    createKeySection(app, async (created) => {
      status.textContent = `Created key "${created.keyId}"`;
      shownKeyId = created.keyId;
      showSecret(secretArea, created);
      await load();
    }),
    secretArea,
  );

  async function load() {
    const { data } = await app.call("listKeys");
    if (disposed) return;
    replaceChildren(body, data.map(keyRow));
    if (data.length === 0) {
      body.append(h("tr", {}, h("td", { colspan: COLUMNS.length }, "No keys yet: create one below.")));
    }
  }

  function keyRow(key) {
    return h(
      "tr",
      {},
      h(
        "td",
        {},
        h("code", {}, key.keyId),
        key.publicKey !== undefined && [" ", h("span", { class: "tag" }, "public key for tenant tokens")],
      ),
      h("td", {}, key.description === "" ? "—" : key.description),
      h("td", {}, key.actions.join(", ")),
      h("td", {}, key.indexes.join(", ")),
      h("td", {}, key.expiresAt === null ? "never" : formatTime(key.expiresAt)),
      h("td", {}, key.requestsPerMinute === null ? "unlimited" : `${key.requestsPerMinute}/min`),
      h("td", {}, formatTime(key.createdAt)),
      h("td", {}, key.lastUsedAt === null ? "never" : formatTime(key.lastUsedAt)),
      h(
        "td",
        {},
        h("button", {
          type: "button",
          class: "danger",
          "aria-label": `Delete key ${key.keyId}`,
          onclick: () => remove(key.keyId),
        }, "Delete"),
      ),
    );
  }

  async function remove(keyId) {
    if (!await confirmAction(`Delete key ${keyId}?`, "Delete")) return;
    try {
      await app.call("deleteKey", { keyId });
      status.textContent = `Deleted key "${keyId}"`;
      if (keyId === shownKeyId) replaceChildren(secretArea);
      await load();
      main.querySelector("h1").focus();
    } catch (error) {
      app.report(error);
    }
  }

  load().catch((error) => app.report(error));
  return () => disposed = true;
}
