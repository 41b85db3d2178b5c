/** A modal that asks for a comma-separated list (words, document ids), reachable by keyboard (Escape cancels). */
import { field, h } from "./dom.js";
import { commaList } from "./settings_view.js";

let dialogs = 0;

/**
 * Asks `title` for a list in a field labelled `options.label` (described by `options.hint`, starting at
 * `options.value`); resolves to its items when the person presses `options.submitLabel`, or null on "Cancel" or Escape.
 */
export function askForList(title, { label, hint, value = "", submitLabel }) {
  const titleId = `list-title-${++dialogs}`;
  return new Promise((resolve) => {
    const input = h("input", { name: "list", value, autocomplete: "off", spellcheck: "false", autofocus: true });
    input.addEventListener("input", () => input.setCustomValidity(""));
    const dialog = h(
      "dialog",
      { "aria-labelledby": titleId },
      h(
        "form",
        { onsubmit },
        h("h2", { id: titleId }, title),
        field(label, input, hint),
        h(
          "div",
          { class: "actions" },
          h("button", { type: "submit" }, submitLabel),
          h("button", { type: "button", onclick: () => dialog.close("cancel") }, "Cancel"),
        ),
      ),
    );

    function onsubmit(event) {
      event.preventDefault();
      if (commaList(input.value).length === 0) {
        input.setCustomValidity("Write at least one, separated by commas");
        input.reportValidity();
        return;
      }
      dialog.close("save");
    }

    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(dialog.returnValue === "save" ? commaList(input.value) : null);
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}
