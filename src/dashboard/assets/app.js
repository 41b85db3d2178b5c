/** The dashboard's entry: signs in, draws the banner, and shows the view that the URL's hash names. */
import { forgetSession, getJson, manage, readSession } from "./api.js";
import { h, replaceChildren } from "./dom.js";
import { renderSignIn } from "./sign_in_view.js";
import { renderIndexesView } from "./indexes_view.js";
import { renderIndexView } from "./index_view.js";
import { renderProjectView } from "./project_view.js";
import { renderKeysView } from "./keys_view.js";
import { renderSettingsView } from "./settings_view.js";
import { renderAnalyticsView } from "./analytics_view.js";

const main = document.getElementById("main");
const sessionArea = document.getElementById("session");
const alertArea = document.getElementById("alert");

/** Stops the shown view's polling; replaced by each view. */
let disposeView = () => {};

// Without them the forms offer less (no model list), but the page still works.
const settings = await getJson("/ui/settings.json").then(({ data }) => data, () => null);

/** What every view gets: calls as the signed-in project, the server's settings, and the shared alert. */
function appFor(session) {
  return {
    projectId: session.projectId,
    settings,
    call: (action, fields) => manage(session, action, fields),
    report(error) {
      alertArea.textContent = error instanceof Error ? error.message : String(error);
      alertArea.hidden = false;
    },
    clearAlert() {
      alertArea.textContent = "";
      alertArea.hidden = true;
    },
  };
}

function show() {
  disposeView();
  disposeView = () => {};
  alertArea.textContent = "";
  alertArea.hidden = true;
  const session = readSession();
  if (session === null) {
    replaceChildren(sessionArea);
    disposeView = renderSignIn(main, { report: appFor({}).report, onSignedIn: show });
    return;
  }
  replaceChildren(
    sessionArea,
    h("span", { class: "project" }, `Project: ${session.projectId}`),
    h(
      "nav",
      { "aria-label": "Main" },
      h("a", { href: "#/indexes" }, "Indexes"),
      h("a", { href: "#/keys" }, "Keys"),
      h("a", { href: "#/project" }, "Project"),
    ),
    h("button", { type: "button", onclick: signOut }, "Sign out"),
  );
  const app = appFor(session);
  // A hash is a path, then perhaps "?" and parameters: `#/indexes/shop?query=sofa&mode=fulltext` (names are encoded,
  // so the first "?" ends the path).
  const hash = location.hash.replace(/^#\/?/, "");
  const paramsAt = hash.includes("?") ? hash.indexOf("?") : hash.length;
  const route = hash.slice(0, paramsAt).split("/");
  const params = new URLSearchParams(hash.slice(paramsAt + 1));
  const indexName = route[0] === "indexes" ? decodedOrNull(route[1]) : null;
  if (indexName !== null && indexName !== "" && route[2] === "settings") {
    disposeView = renderSettingsView(main, app, indexName);
  } else if (indexName !== null && indexName !== "" && route[2] === "analytics") {
    disposeView = renderAnalyticsView(main, app, indexName);
  } else if (indexName !== null && indexName !== "") {
    disposeView = renderIndexView(main, app, indexName, { query: params.get("query"), mode: params.get("mode") });
  } else if (route[0] === "project") {
    disposeView = renderProjectView(main, app);
  } else if (route[0] === "keys") {
    disposeView = renderKeysView(main, app);
  } else {
    if (location.hash !== "#/indexes") history.replaceState(null, "", "#/indexes");
    disposeView = renderIndexesView(main, app);
  }
  // Keyboard and screen reader users land on the new view's heading.
  main.querySelector("h1")?.focus();
}

/** A URL component decoded, or null when there is none or it is malformed (a hand-edited hash). */
function decodedOrNull(component) {
  try {
    return component === undefined ? null : decodeURIComponent(component);
  } catch {
    return null;
  }
}

function signOut() {
  forgetSession();
  history.replaceState(null, "", location.pathname);
  show();
}

addEventListener("hashchange", show);
show();
