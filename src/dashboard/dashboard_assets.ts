/**
 * The dashboard's files, as text in the module graph: they ship inside a compiled binary and a published package with
 * no file reads and no build step.
 */
import indexHtml from "./assets/index.html" with { type: "text" };
import styleCss from "./assets/style.css" with { type: "text" };
import favicon from "./assets/favicon.svg" with { type: "text" };
import app from "./assets/app.js" with { type: "text" };
import api from "./assets/api.js" with { type: "text" };
import dom from "./assets/dom.js" with { type: "text" };
import poll from "./assets/poll.js" with { type: "text" };
import pager from "./assets/pager.js" with { type: "text" };
import confirmDialog from "./assets/confirm_dialog.js" with { type: "text" };
import signInView from "./assets/sign_in_view.js" with { type: "text" };
import indexesView from "./assets/indexes_view.js" with { type: "text" };
import indexView from "./assets/index_view.js" with { type: "text" };
import projectView from "./assets/project_view.js" with { type: "text" };
import keysView from "./assets/keys_view.js" with { type: "text" };
import settingsView from "./assets/settings_view.js" with { type: "text" };
import analyticsView from "./assets/analytics_view.js" with { type: "text" };
import analyticsChart from "./assets/analytics_chart.js" with { type: "text" };
import queryFixes from "./assets/query_fixes.js" with { type: "text" };
import listDialog from "./assets/list_dialog.js" with { type: "text" };
import keyForm from "./assets/key_form.js" with { type: "text" };
import searchSection from "./assets/search_section.js" with { type: "text" };
import curlCommand from "./assets/curl_command.js" with { type: "text" };
import documentsSection from "./assets/documents_section.js" with { type: "text" };
import addDocumentsSection from "./assets/add_documents_section.js" with { type: "text" };
import documentBatches from "./assets/document_batches.js" with { type: "text" };

/** One file of the dashboard. */
export interface DashboardAsset {
  /** Its name under `/ui/`. */
  name: string;
  contentType: string;
  text: string;
}

const JS = "text/javascript; charset=utf-8";

/** The page itself, served at `/ui`. */
export const DASHBOARD_PAGE: DashboardAsset = {
  name: "index.html",
  contentType: "text/html; charset=utf-8",
  text: indexHtml,
};

/** Every file the page loads, by name. */
export const DASHBOARD_ASSETS: readonly DashboardAsset[] = [
  DASHBOARD_PAGE,
  { name: "style.css", contentType: "text/css; charset=utf-8", text: styleCss },
  { name: "favicon.svg", contentType: "image/svg+xml", text: favicon },
  { name: "app.js", contentType: JS, text: app },
  { name: "api.js", contentType: JS, text: api },
  { name: "dom.js", contentType: JS, text: dom },
  { name: "poll.js", contentType: JS, text: poll },
  { name: "pager.js", contentType: JS, text: pager },
  { name: "confirm_dialog.js", contentType: JS, text: confirmDialog },
  { name: "sign_in_view.js", contentType: JS, text: signInView },
  { name: "indexes_view.js", contentType: JS, text: indexesView },
  { name: "index_view.js", contentType: JS, text: indexView },
  { name: "project_view.js", contentType: JS, text: projectView },
  { name: "keys_view.js", contentType: JS, text: keysView },
  { name: "settings_view.js", contentType: JS, text: settingsView },
  { name: "analytics_view.js", contentType: JS, text: analyticsView },
  { name: "analytics_chart.js", contentType: JS, text: analyticsChart },
  { name: "query_fixes.js", contentType: JS, text: queryFixes },
  { name: "list_dialog.js", contentType: JS, text: listDialog },
  { name: "key_form.js", contentType: JS, text: keyForm },
  { name: "search_section.js", contentType: JS, text: searchSection },
  { name: "curl_command.js", contentType: JS, text: curlCommand },
  { name: "documents_section.js", contentType: JS, text: documentsSection },
  { name: "add_documents_section.js", contentType: JS, text: addDocumentsSection },
  { name: "document_batches.js", contentType: JS, text: documentBatches },
];
