/** The form that creates a key with its scopes, and the panel that shows the new key's secret once. */
import { field, h, replaceChildren, whileDisabled } from "./dom.js";

/** Every action a key may be given, as the API names them (`ACTIONS` in src/api/request_schemas.ts). */
export const KEY_ACTIONS = [
  "createIndex",
  "getIndex",
  "listIndexes",
  "deleteIndex",
  "addDocs",
  "deleteDocs",
  "getDocs",
  "search",
  "multiSearch",
  "reembedIndex",
  "exportIndex",
  "importIndex",
  "createKey",
  "listKeys",
  "deleteKey",
  "getWebhookSecret",
  "rotateWebhookSecret",
  "setAlias",
  "deleteAlias",
  "listAliases",
  "restoreIndex",
  "listDeletedIndexes",
  "updateSettings",
  "searchAnalytics",
  "recordClick",
];

/** The actions that `"*"` leaves out: a key manages keys only when it is given them by name. */
export const KEY_MANAGEMENT_ACTIONS = ["createKey", "listKeys", "deleteKey", "getWebhookSecret", "rotateWebhookSecret"];

/**
 * The fields of a `createKey` call from the form's values (strings as the inputs hold them); throws, saying what to
 * fix, for a scope that names no action or no index.
 */
export function createKeyFields({ description, allActions, actions, indexes, expires, rate }) {
  const chosen = allActions
    ? ["*", ...actions.filter((action) => KEY_MANAGEMENT_ACTIONS.includes(action))]
    : [...actions];
  if (chosen.length === 0) throw new Error("Choose at least one action, or all actions");
  const patterns = indexes.split(",").map((pattern) => pattern.trim()).filter((pattern) => pattern !== "");
  if (patterns.length === 0) throw new Error('Name at least one index or pattern, or "*" for all');
  const fields = { actions: chosen, indexes: patterns };
  if (description.trim() !== "") fields.description = description.trim();
  // A datetime-local value has no offset: it is the reader's local time, which the ISO form carries as UTC.
  if (expires !== "") fields.expiresAt = new Date(expires).toISOString();
  if (rate !== "") fields.requestsPerMinute = Number(rate);
  return fields;
}

/** The "Create a key" section; `onCreated` runs with the created key (and its secret) after each success. */
export function createKeySection(app, onCreated) {
  const description = h("input", { name: "description", maxlength: 256, autocomplete: "off" });
  const all = h("input", { type: "checkbox", name: "allActions", checked: true, onchange: syncActions });
  const boxes = KEY_ACTIONS.map((action) => h("input", { type: "checkbox", name: "actions", value: action }));
  const indexes = h("input", { name: "indexes", value: "*", required: true, autocomplete: "off", spellcheck: "false" });
  const expires = h("input", { name: "expires", type: "datetime-local" });
  const rate = h("input", { name: "rate", type: "number", min: 1, max: 1_000_000, step: 1 });
  const submit = h("button", { type: "submit" }, "Create key");
  const form = h(
    "form",
    { class: "grid", onsubmit },
    field("Description", description, "Optional: what the key is for"),
    field("Indexes", indexes, 'Comma-separated names; a trailing * matches a prefix, "*" alone matches every index'),
    field("Expires", expires, "Optional: when the key stops working, in your time zone"),
    field("Requests per minute", rate, "Optional: more get 429"),
    h(
      "fieldset",
      { class: "wide" },
      h("legend", {}, "Actions"),
      h(
        "div",
        { class: "checks" },
        h("label", { class: "check" }, all, "All actions (*)"),
        h("small", {}, `"*" does not include ${KEY_MANAGEMENT_ACTIONS.join(", ")}: tick them to add them`),
      ),
      h("div", { class: "checks" }, boxes.map((box) => h("label", { class: "check" }, box, box.value))),
    ),
    h("div", { class: "actions" }, submit),
  );
  syncActions();

  /** With "All actions" ticked, only the key management actions (which "*" leaves out) remain to choose. */
  function syncActions() {
    for (const box of boxes) box.disabled = all.checked && !KEY_MANAGEMENT_ACTIONS.includes(box.value);
  }

  async function onsubmit(event) {
    event.preventDefault();
    await whileDisabled([submit], async () => {
      try {
        const fields = createKeyFields({
          description: description.value,
          allActions: all.checked,
          actions: boxes.filter((box) => box.checked && !box.disabled).map((box) => box.value),
          indexes: indexes.value,
          expires: expires.value,
          rate: rate.value,
        });
        const { data } = await app.call("createKey", fields);
        app.clearAlert();
        form.reset();
        syncActions();
        await onCreated(data);
      } catch (error) {
        app.report(error);
      }
    });
  }

  return h("section", { class: "card" }, h("h2", {}, "Create a key"), form);
}

/** Shows `created`'s secret in `area` with a way to copy it; the secret lives only in this field, never in storage. */
export function showSecret(area, created) {
  const secret = h("input", { readonly: true, value: created.key, spellcheck: "false", autocomplete: "off" });
  const status = h("p", { role: "status", class: "status" });
  async function copy() {
    try {
      await navigator.clipboard.writeText(secret.value);
      status.textContent = "Copied to the clipboard";
    } catch {
      // Without clipboard access (an insecure origin, a denied permission), select it for the person to copy.
      secret.focus();
      secret.select();
      status.textContent = "Copying is not allowed here: the key is selected, copy it with Ctrl+C or ⌘C";
    }
  }
  function hide() {
    replaceChildren(area);
    // The focused button is gone: the keyboard goes back to the view's heading.
    document.querySelector("main h1")?.focus();
  }
  replaceChildren(
    area,
    h(
      "section",
      { class: "card secret", "aria-label": "New key" },
      h("h2", {}, `Key ${created.keyId} created`),
      field("Secret key", secret, "Copy it now: it will not be shown again. It is stored only as a hash."),
      h(
        "div",
        { class: "actions" },
        h("button", { type: "button", onclick: copy }, "Copy"),
        h("button", { type: "button", class: "link", onclick: hide }, "Done, hide it"),
      ),
      status,
    ),
  );
  secret.focus();
  secret.select();
}
