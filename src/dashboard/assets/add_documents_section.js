/**
 * Adding documents: pasted or from a `.json`/`.jsonl` file, sent in batches within the server's limits, with a
 * progress bar; a failed batch is reported and the others still land.
 */
import { field, h, replaceChildren, whileDisabled } from "./dom.js";
import { batchDocuments, parseDocuments } from "./document_batches.js";

/**
 * The most one batch holds, below the server's own limits: smaller requests show progress and lose less when one
 * fails.
 */
const BATCH_DOCS = 500;
const BATCH_BYTES = 4_000_000;

/** How many times a batch is retried when the server asks to come back later (429 or 503 with Retry-After). */
const RETRIES = 5;

/** The section for index `name`. */
export function addDocumentsSection(app, name) {
  const pasted = h("textarea", {
    name: "documents",
    rows: 6,
    spellcheck: "false",
    placeholder: '[{"id": "1", "text": "A first document", "metadata": {"year": 2024}}]',
  });
  const file = h("input", { type: "file", name: "file", accept: ".json,.jsonl,.ndjson,application/json" });
  const upsert = h("input", { type: "checkbox", name: "upsert", checked: true });
  const progress = h("progress", { "aria-label": "Upload progress", value: 0, max: 1, hidden: true });
  const status = h("p", { role: "status", class: "status" });
  const failures = h("div", { role: "alert", class: "alert", hidden: true });
  const buttons = [
    h("button", { type: "button", onclick: () => send(() => pasted.value) }, "Add pasted documents"),
    h("button", {
      type: "button",
      onclick: () =>
        send(() => {
          const chosen = file.files?.[0];
          if (chosen === undefined) throw new Error("Choose a file first");
          return chosen.text();
        }),
    }, "Upload file"),
  ];

  function send(readText) {
    return whileDisabled(buttons, async () => {
      replaceChildren(failures);
      failures.hidden = true;
      let docs;
      try {
        docs = parseDocuments(await readText());
      } catch (error) {
        fail(error.message);
        return;
      }
      const settings = app.settings ?? { maxDocsPerRequest: 100, maxBodyBytes: 1_000_000 };
      const batches = batchDocuments(docs, {
        maxDocs: Math.min(settings.maxDocsPerRequest, BATCH_DOCS),
        maxBytes: Math.min(settings.maxBodyBytes, BATCH_BYTES),
      });
      progress.hidden = false;
      progress.max = docs.length;
      progress.value = 0;
      let sent = 0;
      let tried = 0;
      let failed = 0;
      for (const [i, batch] of batches.entries()) {
        status.textContent = `Sent ${sent} of ${docs.length} documents`;
        try {
          await addWithRetries(batch);
          sent += batch.length;
        } catch (error) {
          failed++;
          fail(`Batch ${i + 1} of ${batches.length} failed: ${error.message}`);
        }
        tried += batch.length;
        progress.value = tried;
      }
      status.textContent = `Sent ${sent} documents in ${batches.length} batches` +
        (failed === 0 ? "" : `; ${failed} ${failed === 1 ? "batch" : "batches"} failed`);
    });
  }

  async function addWithRetries(docs) {
    for (let attempt = 0;; attempt++) {
      try {
        return await app.call("addDocs", { indexName: name, docs, options: { upsert: upsert.checked } });
      } catch (error) {
        if (attempt === RETRIES || (error.status !== 429 && error.status !== 503)) throw error;
        await new Promise((resolve) => setTimeout(resolve, (error.retryAfter ?? 1) * 1000));
      }
    }
  }

  function fail(message) {
    failures.append(h("p", {}, message));
    failures.hidden = false;
  }

  return h(
    "section",
    { class: "card" },
    h("h2", {}, "Add documents"),
    field(
      "Documents (JSON or JSON Lines)",
      pasted,
      'An array of {"id", "text", "metadata"} objects, or one per line; "text" is required and may be ""',
    ),
    h("div", { class: "actions" }, buttons[0]),
    field("Documents file (.json or .jsonl)", file),
    h("div", { class: "actions" }, buttons[1]),
    h("label", { class: "check" }, upsert, "Replace documents with the same id"),
    progress,
    status,
    failures,
  );
}
