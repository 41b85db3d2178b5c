/**
 * The dashboard as served (headers, files, settings), its document parsing and batching, and what the black-box suite
 * does not drive: keyboard-only use, and an upload whose middle batch fails.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { DASHBOARD_ASSETS } from "../../src/dashboard/dashboard_assets.ts";
import { batchDocuments, parseDocuments } from "../../src/dashboard/assets/document_batches.js";
import { startTestServer } from "../_helpers.ts";
import { chromiumPath, launchBrowser } from "../_browser.ts";
import { ok, serverEnvironment, startServerProcess } from "../_server_process.ts";

const ASSETS_DIR = new URL("../../src/dashboard/assets/", import.meta.url);

Deno.test("every path under /ui answers GET with a strict CSP, nosniff and a referrer policy, and nothing else", async () => {
  await using server = await startTestServer();
  const paths = ["/ui", "/ui/", "/ui/settings.json", ...DASHBOARD_ASSETS.map((asset) => `/ui/${asset.name}`)];
  for (const path of paths) {
    const response = await fetch(new URL(path, server.url));
    await response.body?.cancel();
    assert.equal(response.status, 200, path);
    const csp = response.headers.get("content-security-policy") ?? "";
    assert.match(csp, /default-src 'self'/, path);
    assert.match(csp, /script-src 'self'(;|$)/, path);
    assert.match(csp, /frame-ancestors 'none'/, path);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, path);
    assert.equal(response.headers.get("x-content-type-options"), "nosniff", path);
    assert.equal(response.headers.get("referrer-policy"), "no-referrer", path);
  }
  const page = await fetch(new URL("/ui", server.url));
  assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
  assert.match(await page.text(), /<script type="module" src="\/ui\/app.js"><\/script>/);
  const script = await fetch(new URL("/ui/app.js", server.url));
  await script.body?.cancel();
  assert.equal(script.headers.get("content-type"), "text/javascript; charset=utf-8");

  const unknown = await fetch(new URL("/ui/secrets.js", server.url));
  assert.equal(unknown.status, 404);
  assert.match((await unknown.json()).error, /Not found/);
  const posted = await fetch(new URL("/ui", server.url), { method: "POST", body: "{}" });
  assert.equal(posted.status, 405);
  await posted.body?.cancel();
});

Deno.test("the settings offer the registry's models, the languages and the request limits", async () => {
  await using server = await startTestServer({ env: { MAX_DOCS_PER_REQUEST: "250" } });
  const settings = await (await fetch(new URL("/ui/settings.json", server.url))).json();
  assert.deepEqual(settings.models, ["svc-mediumlm", "svc-minilm"]);
  assert.equal(settings.defaultModel, "svc-minilm");
  assert.ok(settings.languages.includes("english") && settings.languages.includes("german"));
  assert.equal(settings.defaultLanguage, "english");
  assert.equal(settings.maxDocsPerRequest, 250);
  assert.ok(settings.maxBodyBytes > 0);
});

Deno.test("every file of the dashboard is served, its script stays under 150 KB, and none of it writes HTML", async () => {
  const files: string[] = [];
  for await (const entry of Deno.readDir(ASSETS_DIR)) files.push(entry.name);
  assert.deepEqual(DASHBOARD_ASSETS.map((asset) => asset.name).sort(), files.sort());
  const scripts = DASHBOARD_ASSETS.filter((asset) => asset.name.endsWith(".js"));
  const bytes = scripts.reduce((sum, asset) => sum + new TextEncoder().encode(asset.text).byteLength, 0);
  assert.ok(bytes <= 150_000, `${bytes} bytes of script`);
  for (const asset of DASHBOARD_ASSETS) {
    // Data reaches the page as text nodes and attributes only (see dom.js).
    assert.doesNotMatch(
      asset.text,
      /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/,
      asset.name,
    );
    assert.doesNotMatch(asset.text, /\blocalStorage\.|document\.cookie/, asset.name);
    assert.doesNotMatch(
      asset.text,
      /https?:\/\/(?!www\.w3\.org\/2000\/svg)/,
      `${asset.name} loads nothing from elsewhere`,
    );
  }
});

Deno.test("without Chromium the browser tests fail, saying how to install it", () => {
  assert.throws(
    () => chromiumPath(["/nonexistent/chromium"]),
    /Chromium is not installed \(looked at \/nonexistent\/chromium\): run "apt-get install chromium"/,
  );
});

Deno.test("pasted text is read as an array, one document, {docs} or JSON Lines, and a bad line is named", () => {
  const a = { id: "a", text: "first" };
  const b = { id: "b", text: "second", metadata: { year: 2024 } };
  assert.deepEqual(parseDocuments(JSON.stringify([a, b])), [a, b]);
  assert.deepEqual(parseDocuments(JSON.stringify(a)), [a]);
  assert.deepEqual(parseDocuments(JSON.stringify({ docs: [b] })), [b]);
  assert.deepEqual(parseDocuments(`${JSON.stringify(a)}\n\n${JSON.stringify(b)}\n`), [a, b]);
  assert.throws(() => parseDocuments(`${JSON.stringify(a)}\n{"id": "b",\n`), /^Error: Line 2 is not a document/);
  assert.throws(() => parseDocuments("[1, 2]"), /Document 1 is not a JSON object/);
  assert.throws(() => parseDocuments("  "), /There are no documents/);
});

Deno.test("batches hold at most maxDocs documents and stay under maxBytes, and a huge document goes alone", () => {
  const docs = Array.from({ length: 25 }, (_, i) => ({ id: `d${i}`, text: "x".repeat(i === 7 ? 20_000 : 100) }));
  const byCount = batchDocuments(docs, { maxDocs: 10, maxBytes: 1_000_000 });
  assert.deepEqual(byCount.map((batch) => batch.length), [10, 10, 5]);
  const bySize = batchDocuments(docs, { maxDocs: 100, maxBytes: 4096 + 1200 });
  assert.deepEqual(bySize.flat(), docs);
  for (const batch of bySize) {
    const bytes = batch.reduce((sum, doc) => sum + JSON.stringify(doc).length + 1, 0);
    assert.ok(batch.length === 1 || bytes <= 1200, `${batch.length} documents of ${bytes} bytes`);
  }
  assert.ok(bySize.some((batch) => batch.length === 1 && batch[0]!.id === "d7"));
});

Deno.test({
  name: "by keyboard alone: sign in, open an index, search, and cancel a deletion with Escape",
  // playwright-core keeps its pipe to Chromium and timers of its own between steps.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using server = await startServerProcess(await serverEnvironment());
    await ok(server, {
      action: "createIndex",
      indexName: "faq",
      docs: [{ id: "q1", text: "How do I rotate a project key" }, { id: "q2", text: "Where are snapshots kept" }],
      options: { wait: true },
    });
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      await page.goto(new URL("/ui", server.url).href);
      // The key field has the focus, the project is prefilled: type the key and press Enter.
      await page.getByLabel("Key").waitFor();
      await page.keyboard.type(server.key);
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: "Indexes", level: 1 }).waitFor();
      await tabTo(page, "faq");
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: "faq", level: 1 }).waitFor();
      await tabTo(page, "Search");
      await page.keyboard.type("rotate key");
      await page.keyboard.press("Enter");
      const first = page.getByRole("list", { name: "Results" }).getByRole("listitem").first();
      await first.waitFor();
      assert.match(await first.innerText(), /q1/);
      // "Similar" on a hit searches for the documents most like it, leaving it out.
      await tabTo(page, "Similar to q1");
      await page.keyboard.press("Enter");
      await page.getByRole("status").filter({ hasText: "Similar to q1: 1 matches" }).waitFor();
      const similar = await page.getByRole("list", { name: "Results" }).getByRole("listitem").allInnerTexts();
      assert.deepEqual(similar.map((text) => text.match(/\bq\d\b/)?.[0]), ["q2"]);

      await page.getByRole("link", { name: "Indexes" }).focus();
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: "Indexes", level: 1 }).waitFor();
      await tabTo(page, "Delete index faq");
      await page.keyboard.press("Enter");
      const dialog = page.getByRole("dialog", { name: "Delete index faq?" });
      await dialog.waitFor();
      // The dialog opens on "Cancel", so that Enter cannot delete by accident.
      assert.equal(await focusedName(page), "Cancel");
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });
      const { docCount } = await ok<{ docCount: number }>(server, { action: "getIndex", indexName: "faq" });
      assert.equal(docCount, 2);
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  },
});

Deno.test({
  name: "an upload whose middle batch fails reports that batch and lands the others",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const env = { ...await serverEnvironment(), MAX_DOCS_PER_REQUEST: "40" };
    await using server = await startServerProcess(env);
    await ok(server, { action: "createIndex", indexName: "bulk", docs: [], options: { wait: true } });
    const lines = Array.from(
      { length: 100 },
      (_, i) => JSON.stringify({ id: `d${i}`, text: i === 55 ? 5 : `doc ${i}` }),
    );
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(new URL("/ui#/indexes/bulk", server.url).href);
      await page.getByLabel("Key").fill(server.key);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { name: "bulk", level: 1 }).waitFor();
      await page.getByLabel("Documents file (.json or .jsonl)").setInputFiles({
        name: "docs.jsonl",
        mimeType: "application/x-ndjson",
        buffer: Buffer.from(lines.join("\n")),
      });
      await page.getByRole("button", { name: "Upload file" }).click();
      await page.getByText("Sent 60 documents in 3 batches; 1 batch failed").waitFor();
      const alert = await page.getByRole("alert").filter({ hasText: "Batch" }).innerText();
      assert.match(alert, /^Batch 2 of 3 failed: Invalid "docs\[15\]\.text"/);
      const progress = page.getByRole("progressbar", { name: "Upload progress" });
      assert.equal(await progress.getAttribute("value"), "100");
      for (let i = 0; i < 50; i++) {
        const index = await ok<{ docCount: number; status: string }>(server, { action: "getIndex", indexName: "bulk" });
        if (index.status === "Ready" && index.docCount === 60) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const docs = await ok<{ id: string }[]>(server, { action: "getDocs", indexName: "bulk" });
      assert.deepEqual(
        docs.map((doc) => doc.id).sort(),
        [...Array(40).keys(), ...Array.from({ length: 20 }, (_, i) => 80 + i)].map((i) => `d${i}`).sort(),
      );
    } finally {
      await browser.close();
    }
  },
});

/** Presses Tab until the focused element's accessible name is `name`. */
async function tabTo(page: import("playwright-core").Page, name: string): Promise<void> {
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press("Tab");
    if (await focusedName(page) === name) return;
  }
  throw new Error(`Tab never reached "${name}"`);
}

/** The accessible name of the focused element, as far as labels, aria-label and text give it. */
function focusedName(page: import("playwright-core").Page): Promise<string> {
  return page.evaluate(`(() => {
    const element = document.activeElement;
    if (element === null) return "";
    return element.getAttribute("aria-label") ?? element.labels?.[0]?.textContent ?? element.textContent ?? "";
  })()`);
}
