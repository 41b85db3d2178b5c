/** A modal confirmation for what cannot be undone, reachable by keyboard (Escape cancels). */
import { h } from "./dom.js";

let dialogs = 0;

/** Asks `question`; resolves true when the person presses `confirmLabel`, false on "Cancel" or Escape. */
export function confirmAction(question, confirmLabel) {
  const titleId = `confirm-title-${++dialogs}`;
  return new Promise((resolve) => {
    const dialog = h(
      "dialog",
      { "aria-labelledby": titleId },
      h("h2", { id: titleId }, question),
      h("p", {}, "This cannot be undone."),
      h(
        "div",
        { class: "actions" },
        h("button", { type: "button", class: "danger", onclick: () => dialog.close("confirm") }, confirmLabel),
        h("button", { type: "button", autofocus: true, onclick: () => dialog.close("cancel") }, "Cancel"),
      ),
    );
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(dialog.returnValue === "confirm");
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}
