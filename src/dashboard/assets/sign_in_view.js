/** The sign-in form: a project and its key, checked against the API before the session is kept. */
import { manage, saveSession } from "./api.js";
import { field, h, replaceChildren, whileDisabled } from "./dom.js";

/** Shows the form in `main`; `onSignedIn` runs once a key works. Returns the view's disposer. */
export function renderSignIn(main, { report, onSignedIn }) {
  const project = h("input", { name: "project", required: true, autocomplete: "username", spellcheck: "false" });
  const key = h("input", { name: "key", type: "password", required: true, autocomplete: "current-password" });
  const submit = h("button", { type: "submit" }, "Sign in");
  const form = h(
    "form",
    { class: "card narrow", onsubmit },
    h("h1", { tabindex: "-1" }, "Sign in to quire"),
    h("p", {}, "The key of a project was printed once, when the server first started or the project was created."),
    field("Project", project),
    field("Key", key),
    submit,
  );
  replaceChildren(main, form);
  project.value = "default";
  key.focus();

  async function onsubmit(event) {
    event.preventDefault();
    const session = { projectId: project.value.trim(), key: key.value };
    let signedIn = false;
    await whileDisabled([submit], async () => {
      try {
        // Any authenticated call proves the key; this one is the cheapest.
        await manage(session, "listIndexes", { options: { limit: 1 } });
        saveSession(session);
        signedIn = true;
      } catch (error) {
        report(error);
      }
    });
    if (signedIn) onSignedIn();
    else key.select();
  }
  return () => {};
}
