/**
 * Black-box, end to end: the dashboard at `GET /ui` of a real server process, driven in headless Chromium as a person
 * would, selecting only by role, label and visible text (the contract of the page), and checked against the API.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import type { Locator, Page, Request } from "playwright-core";
import { launchBrowser } from "../_browser.ts";
import { ok, serverEnvironment, type ServerProcess, startServerProcess } from "../_server_process.ts";

/** How long a check may take to come true: the page polls every 2 s, and queued writes land within a few. */
const WAIT_MS = 15_000;

/** A body limit small enough that a few hundred kilobytes of documents must go in several batches. */
const MAX_BODY_BYTES = 64 * 1024;

/** The columns of the "Indexes" table, in order. */
const INDEX_COLUMNS = ["Name", "Model", "Docs", "Status", "Size", "Updated", "Actions"];

/** A document as the API takes and returns it. */
interface Doc {
  id: string;
  text: string;
  metadata?: Record<string, unknown>;
}

/** The fields of `getIndex` that these tests read. */
interface IndexView {
  name: string;
  docCount: number;
  status: string;
  language: string;
  model: { id: string; version: string };
}

/** Three short documents that full-text, vector and hybrid search tell apart. */
const SEARCH_DOCS: Doc[] = [
  { id: "doc-fox", text: "The quick brown fox jumps over the lazy dog", metadata: { year: 2020, genre: "fable" } },
  {
    id: "doc-owl",
    text: "The purple tiger and the yellow owl sing to the green frog under the cold moon",
    metadata: { year: 2018, genre: "song" },
  },
  {
    id: "doc-car",
    text: "The red car and the white bus drive past the old house on the long road",
    metadata: { year: 2023, genre: "fable" },
  },
];

/** Retries `check` until it stops throwing; after {@link WAIT_MS} it throws the last failure. */
async function eventually<T>(check: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** The rows of `table` that have a cell under every column header, as records from header to the cell's text. */
async function tableRecords(table: Locator): Promise<Record<string, string>[]> {
  // One read of the whole table in the page: read row by row, a view's refresh (every 2 s) or a new page arriving between
  // two rows mixed rows of two renderings. `DomNode` is what it reads of the page's DOM, which this file's types lack.
  type DomNode = { innerText: string; querySelectorAll(selector: string): Iterable<DomNode> };
  const { headers, rows } = await table.evaluate((element) => {
    const texts = (cells: Iterable<DomNode>) => [...cells].map((cell) => cell.innerText);
    const node = element as unknown as DomNode;
    return {
      headers: texts(node.querySelectorAll("thead th")),
      rows: [...node.querySelectorAll("tbody tr")].map((row) => texts(row.querySelectorAll("td, th"))),
    };
  });
  return rows.filter((cells) => cells.length === headers.length).map((cells) =>
    Object.fromEntries(headers.map((header, i) => [header.trim(), cells[i]!.trim()]))
  );
}

/** The record of the row named `name` in the "Indexes" table; throws while there is none. */
async function indexRow(page: Page, name: string): Promise<Record<string, string>> {
  const record = (await tableRecords(indexesTable(page))).find((row) => row.Name === name);
  assert.ok(record, `no row "${name}" in the Indexes table`);
  return record;
}

/** The table "Indexes" of the indexes view. */
function indexesTable(page: Page): Locator {
  return page.getByRole("table", { name: "Indexes", exact: true });
}

/** The table "Documents" of the index view. */
function documentsTable(page: Page): Locator {
  return page.getByRole("table", { name: "Documents", exact: true });
}

/** The ids in the "Documents" table, top to bottom. */
async function documentIds(page: Page): Promise<string[]> {
  return (await tableRecords(documentsTable(page))).map((row) => row.ID!);
}

/** Waits until the "Documents" table lists exactly `ids`. */
async function expectDocumentIds(page: Page, ids: string[]): Promise<void> {
  await eventually(async () => assert.deepEqual(await documentIds(page), ids));
}

/** The texts of the listitems of the "Results" list. */
async function results(page: Page): Promise<string[]> {
  return await page.getByRole("list", { name: "Results", exact: true }).getByRole("listitem").allInnerTexts();
}

/** The visible element of `role` whose text contains `text`; waits for it. */
async function visible(page: Page, role: "alert" | "status", text: string | RegExp): Promise<Locator> {
  const element = page.getByRole(role).filter({ hasText: text }).first();
  await element.waitFor({ timeout: WAIT_MS });
  return element;
}

/** Fills the sign-in form and submits it. */
async function signIn(page: Page, key: string): Promise<void> {
  await page.getByRole("textbox", { name: "Project", exact: true }).fill("default");
  await page.getByLabel("Key", { exact: true }).fill(key);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

/** Follows the link `name` of the navigation "Main". */
async function navigate(page: Page, name: "Indexes" | "Project"): Promise<void> {
  await page.getByRole("navigation", { name: "Main", exact: true }).getByRole("link", { name, exact: true }).click();
}

/** Opens the index view of `name` from the "Indexes" table. */
async function openIndex(page: Page, name: string): Promise<void> {
  await navigate(page, "Indexes");
  await indexesTable(page).getByRole("link", { name, exact: true }).click();
  await page.getByRole("heading", { level: 1, name, exact: true }).waitFor();
}

/** Whether a request with body `postData` is a `search` call of the API. */
function isSearch(postData: string | null): boolean {
  return /"action"\s*:\s*"search"/.test(postData ?? "");
}

/** The search form's fields, by label; an absent field is left empty. */
interface SearchForm {
  query: string;
  mode: "hybrid" | "fulltext" | "vector";
  filter?: string;
  facets?: string;
  sort?: string;
  limit?: number;
  highlights?: boolean;
}

/** Fills the search form. */
async function fillSearch(page: Page, form: SearchForm): Promise<void> {
  await page.getByRole("searchbox", { name: "Search", exact: true }).fill(form.query);
  await page.getByRole("combobox", { name: "Mode", exact: true }).selectOption(form.mode);
  await page.getByRole("textbox", { name: "Filter (JSON)", exact: true }).fill(form.filter ?? "");
  await page.getByRole("textbox", { name: "Facets", exact: true }).fill(form.facets ?? "");
  await page.getByRole("textbox", { name: "Sort", exact: true }).fill(form.sort ?? "");
  await page.getByRole("spinbutton", { name: "Limit", exact: true }).fill(String(form.limit ?? 10));
  await page.getByRole("checkbox", { name: "Highlights", exact: true }).setChecked(form.highlights ?? true);
}

/** Fills the search form, presses the "Search" button and waits for the API's answer. */
async function search(page: Page, form: SearchForm): Promise<void> {
  await fillSearch(page, form);
  await Promise.all([
    page.waitForResponse((response) => isSearch(response.request().postData())),
    page.getByRole("button", { name: "Search", exact: true }).click(),
  ]);
}

/** Where the page keeps `key`: among localStorage, sessionStorage, cookies and the URL. */
async function keyPlaces(page: Page, key: string): Promise<string[]> {
  const storage = await page.evaluate(() => ({
    localStorage: JSON.stringify(Object.entries(localStorage)),
    sessionStorage: JSON.stringify(Object.entries(sessionStorage)),
  }));
  const cookies = JSON.stringify(await page.context().cookies());
  const places = Object.entries({ ...storage, cookies, URL: page.url() });
  return places.filter(([, text]) => text.includes(key)).map(([place]) => place);
}

/** `(value, max)` of the progressbar "Upload progress", for a `<progress>` or an ARIA progressbar. */
async function uploadProgress(page: Page): Promise<[number, number]> {
  return await page.getByRole("progressbar", { name: "Upload progress", exact: true }).evaluate((element) => {
    const bar = element as unknown as { value?: number; max?: number; getAttribute(name: string): string | null };
    if (typeof bar.value === "number" && typeof bar.max === "number") return [bar.value, bar.max];
    return [Number(bar.getAttribute("aria-valuenow")), Number(bar.getAttribute("aria-valuemax") ?? 100)];
  });
}

/** The directives of a Content-Security-Policy, from name (lower case) to sources. */
function cspDirectives(csp: string): Map<string, string[]> {
  const directives = new Map<string, string[]>();
  for (const directive of csp.split(";")) {
    const [name, ...sources] = directive.trim().split(/\s+/);
    if (name) directives.set(name.toLowerCase(), sources);
  }
  return directives;
}

/** The ids of `indexName`'s documents, through the API. */
async function storedIds(server: ServerProcess, indexName: string): Promise<string[]> {
  return (await ok<Doc[]>(server, { action: "getDocs", indexName })).map((doc) => doc.id);
}

/** The API's error message for a `listIndexes` with `key`. */
async function apiError(server: ServerProcess, key: string): Promise<string> {
  const response = await fetch(server.url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-service-version": "v1", "x-project-key": key },
    body: JSON.stringify({ action: "listIndexes", projectId: "default" }),
  });
  assert.equal(response.status, 403);
  return (await response.json()).error;
}

/** `count` documents `<prefix>00`, `<prefix>01`, … with texts of about `textBytes` bytes. */
function manyDocs(prefix: string, count: number, textBytes = 40): Doc[] {
  return Array.from({ length: count }, (_, i) => {
    const id = `${prefix}${String(i).padStart(2, "0")}`;
    return { id, text: `document ${id} `.repeat(Math.ceil(textBytes / (id.length + 10))).trim() };
  });
}

Deno.test({
  name: "the dashboard, driven in Chromium by its labels and roles",
  // Playwright keeps its connection to Chromium and its timers across steps; they end with `browser.close()`.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await using server = await startServerProcess({
      ...await serverEnvironment(),
      LOG_REQUESTS: "false",
      MAX_BODY_BYTES: String(MAX_BODY_BYTES),
    });
    const ui = new URL("/ui", server.url).href;
    const browser = await launchBrowser();
    const pageErrors: string[] = [];
    const consoleErrors: string[] = [];
    try {
      const page = await browser.newPage();
      page.setDefaultTimeout(WAIT_MS);
      page.on("pageerror", (error) => pageErrors.push(String(error)));
      page.on("console", (message) => {
        if (message.type() === "error") consoleErrors.push(message.text());
      });
      /** A step that, when it fails, reloads the page, so that the next one starts from a view without dialogs. */
      const step = (name: string, fn: () => Promise<void>) =>
        t.step(name, async () => {
          try {
            await fn();
          } catch (error) {
            await page.reload();
            throw error;
          }
        });

      await step("GET /ui answers with a strict Content-Security-Policy, nosniff and a Referrer-Policy", async () => {
        const response = await fetch(ui);
        await response.body?.cancel();
        assert.equal(response.status, 200);
        assert.match(response.headers.get("content-type") ?? "", /^text\/html/);
        const csp = response.headers.get("content-security-policy") ?? "";
        const directives = cspDirectives(csp);
        assert.ok(directives.get("default-src")?.includes("'self'"), `default-src without 'self': ${csp}`);
        assert.deepEqual(directives.get("frame-ancestors"), ["'none'"], csp);
        const scriptSources = directives.get("script-src") ?? directives.get("default-src")!;
        for (const unsafe of ["'unsafe-inline'", "'unsafe-eval'"]) {
          assert.ok(!scriptSources.includes(unsafe), `script-src allows ${unsafe}: ${csp}`);
        }
        assert.equal(response.headers.get("x-content-type-options"), "nosniff");
        assert.ok(response.headers.get("referrer-policy"), "no Referrer-Policy");
      });

      await step(
        "sign in: a wrong key shows the API's error in an alert, the right one opens the indexes",
        async () => {
          await page.goto(ui);
          await page.getByRole("heading", { name: "Sign in to quire", exact: true }).waitFor();
          await signIn(page, "qk_wrong");
          const message = await apiError(server, "qk_wrong");
          await visible(page, "alert", message);
          assert.match(message, /key/i);
          await page.getByRole("heading", { name: "Sign in to quire", exact: true }).waitFor();
          assert.deepEqual(await keyPlaces(page, "qk_wrong"), []);

          await signIn(page, server.key);
          await page.getByRole("heading", { level: 1, name: "Indexes", exact: true }).waitFor();
          await page.getByRole("banner").getByText("Project: default", { exact: true }).waitFor();
          await page.getByRole("button", { name: "Sign out", exact: true }).waitFor();
          assert.deepEqual(await keyPlaces(page, server.key), ["sessionStorage"]);
        },
      );

      await step("the Indexes table lists indexes with model, docs, status, size and date, and refreshes", async () => {
        await ok(server, { action: "createIndex", indexName: "list-alpha", docs: manyDocs("a", 2) });
        await ok(server, { action: "createIndex", indexName: "list-beta", modelId: "svc-mediumlm", docs: [] });
        const alpha = await ok<IndexView>(server, { action: "getIndex", indexName: "list-alpha" });
        const beta = await ok<IndexView>(server, { action: "getIndex", indexName: "list-beta" });
        await navigate(page, "Indexes");
        assert.equal(new URL(page.url()).hash, "#/indexes");
        assert.deepEqual(
          (await indexesTable(page).getByRole("columnheader").allInnerTexts()).map((text) => text.trim()),
          INDEX_COLUMNS,
        );
        const row = await eventually(() => indexRow(page, "list-alpha"));
        assert.equal(row.Model, `svc-minilm ${alpha.model.version}`);
        assert.equal(row.Docs, "2");
        assert.equal(row.Status, "Ready");
        assert.match(row.Size!, /^(—|\d+(\.\d+)? ?[kKMG]?i?B)$/);
        assert.match(row.Updated!, /\d/);
        const betaRow = await indexRow(page, "list-beta");
        assert.equal(betaRow.Model, `svc-mediumlm ${beta.model.version}`);
        assert.equal(betaRow.Docs, "0");
        assert.equal(betaRow.Status, "Ready");
        for (const name of ["Previous page", "Next page"]) {
          assert.ok(await page.getByRole("button", { name, exact: true }).isDisabled(), `${name} is enabled`);
        }

        await ok(server, { action: "addDocs", indexName: "list-alpha", docs: manyDocs("b", 3) });
        await eventually(async () => assert.equal((await indexRow(page, "list-alpha")).Docs, "5"));
      });

      await step("the form creates an index with the chosen model and language", async () => {
        await navigate(page, "Indexes");
        await page.getByRole("heading", { name: "Create an index", exact: true }).waitFor();
        const model = page.getByRole("combobox", { name: "Model", exact: true });
        const models = await model.getByRole("option").allInnerTexts();
        for (const id of ["svc-minilm", "svc-mediumlm"]) {
          assert.ok(models.some((text) => text.includes(id)), `no model ${id} among ${models}`);
        }
        const language = page.getByRole("combobox", { name: "Language", exact: true });
        assert.equal(await language.inputValue(), "english");

        await page.getByRole("textbox", { name: "Name", exact: true }).fill("form index");
        await model.selectOption("svc-minilm");
        await language.selectOption("german");
        await page.getByRole("spinbutton", { name: "Passage max tokens", exact: true }).fill("128");
        await page.getByRole("spinbutton", { name: "Passage overlap tokens", exact: true }).fill("16");
        const [request] = await Promise.all([
          page.waitForRequest((request) => /"action"\s*:\s*"createIndex"/.test(request.postData() ?? "")),
          page.getByRole("button", { name: "Create index", exact: true }).click(),
        ]);
        assert.deepEqual(request.postDataJSON().options?.passages, { maxTokens: 128, overlapTokens: 16 });
        await visible(page, "status", 'Created index "form index"');
        await indexesTable(page).getByRole("link", { name: "form index", exact: true }).waitFor();
        const created = await ok<IndexView>(server, { action: "getIndex", indexName: "form index" });
        assert.equal(created.model.id, "svc-minilm");
        assert.equal(created.language, "german");

        await openIndex(page, "form index");
        assert.equal(new URL(page.url()).hash, `#/indexes/${encodeURIComponent("form index")}`);
        assert.deepEqual(await keyPlaces(page, server.key), ["sessionStorage"]);
      });

      await step("documents are added by paste and by a .jsonl file, in batches with progress", async () => {
        await ok(server, { action: "createIndex", indexName: "add-docs", docs: [] });
        await openIndex(page, "add-docs");
        const replace = page.getByRole("checkbox", { name: "Replace documents with the same id", exact: true });
        assert.ok(await replace.isChecked(), "Replace documents with the same id is not checked");

        const pasted = manyDocs("p", 3);
        await page.getByRole("textbox", { name: "Documents (JSON or JSON Lines)", exact: true }).fill(
          JSON.stringify(pasted),
        );
        await page.getByRole("button", { name: "Add pasted documents", exact: true }).click();
        await visible(page, "status", /Sent 3 documents in 1 batch(es)?\b/);
        await expectDocumentIds(page, ["p00", "p01", "p02"]);

        const before = await ok<IndexView & { version: string }>(server, { action: "getIndex", indexName: "add-docs" });
        await replace.uncheck();
        await page.getByRole("textbox", { name: "Documents (JSON or JSON Lines)", exact: true }).fill(
          JSON.stringify({ id: "p00", text: "not replaced" }),
        );
        await page.getByRole("button", { name: "Add pasted documents", exact: true }).click();
        await eventually(async () => {
          const after = await ok<IndexView & { version: string }>(server, {
            action: "getIndex",
            indexName: "add-docs",
          });
          assert.ok(Number(after.version) > Number(before.version) && after.status === "Ready", "not landed yet");
        });
        const [p00] = await ok<Doc[]>(server, {
          action: "getDocs",
          indexName: "add-docs",
          options: { docIds: ["p00"] },
        });
        assert.equal(p00!.text, pasted[0]!.text, "an unchecked Replace documents with the same id replaced p00");
        await replace.check();

        // About 150 KB in documents of 3 KB: more than two bodies of 64 KiB. Each API call is slowed down, so that
        // the progress shows between batches.
        const uploaded = manyDocs("u", 50, 3000);
        await page.route("**/manage", async (route) => {
          if (route.request().method() === "POST") await new Promise((resolve) => setTimeout(resolve, 300));
          await route.continue();
        });
        try {
          await page.getByLabel("Documents file (.json or .jsonl)", { exact: true }).setInputFiles({
            name: "more.jsonl",
            mimeType: "application/x-ndjson",
            buffer: Buffer.from(uploaded.map((doc) => JSON.stringify(doc)).join("\n") + "\n"),
          });
          await page.getByRole("button", { name: "Upload file", exact: true }).click();
          await visible(page, "status", /Sent \d+ of 50 documents/);
          const [value, max] = await uploadProgress(page);
          assert.ok(value < max, `the upload shows done (${value} of ${max}) before its last batch`);
          const done = await visible(page, "status", /Sent 50 documents in \d+ batch(es)?\b/);
          const batches = Number((await done.innerText()).match(/in (\d+) batch/)![1]);
          assert.ok(batches >= 3, `50 documents of 3 KB went in ${batches} batches of at most 64 KiB`);
          const [finalValue, finalMax] = await uploadProgress(page);
          assert.equal(finalValue, finalMax);
        } finally {
          await page.unrouteAll({ behavior: "wait" });
        }
        await eventually(async () => assert.equal((await storedIds(server, "add-docs")).length, 53));
        await expectDocumentIds(page, [...pasted, ...uploaded].slice(0, 20).map((doc) => doc.id));
        const summary = page.getByRole("main");
        await eventually(async () => {
          const text = await summary.innerText();
          assert.match(text, /Documents\s*:?\s*53\b/);
          assert.match(text, /Status\s*:?\s*Ready\b/);
        });
      });

      await step("a failed batch shows the API's message in an alert, and the other batches land", async () => {
        await ok(server, { action: "createIndex", indexName: "batch-failure", docs: [] });
        await openIndex(page, "batch-failure");
        // A lone surrogate is valid in JSON but not in an id: the API refuses the batch that holds it.
        const docs = manyDocs("f", 51, 3000);
        docs[25] = { id: "bad\ud800", text: "an id that is not well-formed Unicode" };
        await page.getByLabel("Documents file (.json or .jsonl)", { exact: true }).setInputFiles({
          name: "failing.jsonl",
          mimeType: "application/x-ndjson",
          buffer: Buffer.from(docs.map((doc) => JSON.stringify(doc)).join("\n")),
        });
        await page.getByRole("button", { name: "Upload file", exact: true }).click();
        const alert = await visible(page, "alert", /Batch \d+ of \d+ failed: /);
        assert.match(await alert.innerText(), /Batch (\d+) of (\d+) failed: Invalid "docs\[\d+\]\.id": .*surrogate/);
        await eventually(async () => {
          const stored = await storedIds(server, "batch-failure");
          assert.ok(stored.includes("f00") && stored.includes("f50"), "the batches around the failed one are missing");
          assert.ok(!stored.some((id) => id.startsWith("bad")), "the refused document is stored");
        });
      });

      await step("documents are browsed page by page, looked up by id, and long texts expand", async () => {
        const long = "a long text that the table shortens ".repeat(30).trim();
        const docs = manyDocs("d", 25).map((doc) => doc.id === "d00" ? { ...doc, text: long } : doc);
        await ok(server, { action: "createIndex", indexName: "paging", docs });
        await openIndex(page, "paging");
        const pageSize = page.getByRole("combobox", { name: "Page size", exact: true });
        assert.equal(await pageSize.inputValue(), "20");
        assert.deepEqual(await pageSize.getByRole("option").allInnerTexts(), ["10", "20", "50", "100"]);
        await expectDocumentIds(page, docs.slice(0, 20).map((doc) => doc.id));

        const firstText = async () => (await tableRecords(documentsTable(page)))[0]!.Text!;
        assert.ok(!(await firstText()).includes(long), "the long text is not shortened");
        const expand = documentsTable(page).getByRole("button", { name: "Show full text", exact: true });
        assert.equal(await expand.getAttribute("aria-expanded"), "false");
        await expand.click();
        const collapse = documentsTable(page).getByRole("button", { name: "Show less", exact: true });
        assert.equal(await collapse.getAttribute("aria-expanded"), "true");
        assert.ok((await firstText()).includes(long), "Show full text does not show the whole text");

        await pageSize.selectOption("10");
        const previous = page.getByRole("button", { name: "Previous page", exact: true });
        const next = page.getByRole("button", { name: "Next page", exact: true });
        const ids = (from: number, to: number) => docs.slice(from, to).map((doc) => doc.id);
        await expectDocumentIds(page, ids(0, 10));
        assert.ok(await previous.isDisabled(), "Previous page is enabled on the first page");
        await next.click();
        await expectDocumentIds(page, ids(10, 20));
        await next.click();
        await expectDocumentIds(page, ids(20, 25));
        assert.ok(await next.isDisabled(), "Next page is enabled on the last page");
        await previous.click();
        await expectDocumentIds(page, ids(10, 20));

        await page.getByRole("textbox", { name: "Document ID", exact: true }).fill("d07");
        await page.getByRole("button", { name: "Look up", exact: true }).click();
        const found = page.getByRole("region", { name: "Looked-up document", exact: true });
        await found.getByText(docs[7]!.text).waitFor();
        await found.getByText("d07", { exact: true }).waitFor();
        await page.getByRole("textbox", { name: "Document ID", exact: true }).fill("nope");
        await page.getByRole("button", { name: "Look up", exact: true }).click();
        await visible(page, "status", 'No document with id "nope"');
      });

      await step("search in every mode shows hits, scores, highlights, facets and a curl command", async () => {
        await ok(server, { action: "createIndex", indexName: "search", docs: SEARCH_DOCS });
        await openIndex(page, "search");
        assert.equal(await page.getByRole("combobox", { name: "Mode", exact: true }).inputValue(), "hybrid");
        assert.deepEqual(
          await page.getByRole("combobox", { name: "Mode", exact: true }).getByRole("option").allInnerTexts(),
          ["hybrid", "fulltext", "vector"],
        );
        assert.equal(await page.getByRole("spinbutton", { name: "Limit", exact: true }).inputValue(), "10");
        for (const name of ["Highlights", "Typo tolerance", "Prefix matching"]) {
          assert.ok(await page.getByRole("checkbox", { name, exact: true }).isChecked(), `${name} is not checked`);
        }

        await search(page, { query: "quick fox", mode: "fulltext" });
        const [fox] = await eventually(async () => {
          const items = await results(page);
          assert.equal(items.length, 1);
          return items;
        });
        assert.match(fox!, /doc-fox/);
        assert.match(fox!, /Score \d+\.\d{4}\b/);
        assert.match(fox!, /"year":\s*2020/);
        const marks = await page.getByRole("list", { name: "Results", exact: true }).getByRole("listitem")
          .locator("mark").allInnerTexts();
        assert.deepEqual([...new Set(marks.map((mark) => mark.toLowerCase()))].sort(), ["fox", "quick"]);
        await visible(page, "status", /^\s*1 match(es)?, 1 shown, [\d.]+ ms\s*$/);
        const curl = await page.getByRole("textbox", { name: "curl command", exact: true }).inputValue();
        assert.match(curl, /curl/);
        assert.match(curl, /\$QUIRE_KEY/);
        assert.match(curl, /quick fox/);
        assert.match(curl, /"action":\s*"search"/);
        assert.ok(!curl.includes(server.key), "the curl command holds the key");
        await page.getByRole("button", { name: "Copy curl command", exact: true }).waitFor();

        await search(page, { query: SEARCH_DOCS[1]!.text, mode: "vector" });
        await eventually(async () => assert.match((await results(page))[0] ?? "", /doc-owl/));
        assert.match((await results(page))[0]!, /Score 1\.0000/);

        await search(page, { query: SEARCH_DOCS[2]!.text, mode: "hybrid" });
        await eventually(async () => assert.match((await results(page))[0] ?? "", /doc-car/));

        // Pressing Enter in the searchbox searches too.
        await fillSearch(page, { query: "the", mode: "fulltext", filter: '{"year": {"$gte": 2020}}', facets: "genre" });
        await Promise.all([
          page.waitForResponse((response) => isSearch(response.request().postData())),
          page.getByRole("searchbox", { name: "Search", exact: true }).press("Enter"),
        ]);
        await eventually(async () => {
          const items = await results(page);
          assert.equal(items.length, 2);
          assert.ok(items.every((item) => !item.includes("doc-owl")), "the filter let doc-owl through");
        });
        await page.getByRole("heading", { name: "Facets", exact: true }).waitFor();
        assert.deepEqual(
          await page.getByRole("list", { name: "genre", exact: true }).getByRole("listitem").allInnerTexts(),
          ["fable (2)"],
        );

        await search(page, { query: "the", mode: "fulltext", sort: "year:desc", limit: 2 });
        await eventually(async () => {
          const order = (await results(page)).map((item) => item.match(/doc-\w+/)?.[0]);
          assert.deepEqual(order, ["doc-car", "doc-fox"]);
        });
        await visible(page, "status", /^\s*3 matches, 2 shown, [\d.]+ ms\s*$/);

        await search(page, { query: "quick fox", mode: "fulltext", highlights: false });
        await eventually(async () => assert.match((await results(page))[0] ?? "", /doc-fox/));
        assert.equal(await page.getByRole("list", { name: "Results", exact: true }).locator("mark").count(), 0);

        const searches: string[] = [];
        const countSearch = (request: Request) => {
          if (isSearch(request.postData())) searches.push(request.url());
        };
        page.on("request", countSearch);
        try {
          await fillSearch(page, { query: "fox", mode: "fulltext", filter: '{"year": 2020' });
          await page.getByRole("button", { name: "Search", exact: true }).click();
          const alert = await visible(page, "alert", "Filter is not valid JSON");
          assert.match(await alert.innerText(), /^\s*Filter is not valid JSON/);
          await new Promise((resolve) => setTimeout(resolve, 1000));
        } finally {
          page.off("request", countSearch);
        }
        assert.deepEqual(searches, [], "a search was sent with an invalid filter");
      });

      await step("documents and indexes are deleted after a confirmation", async () => {
        await ok(server, { action: "createIndex", indexName: "deletions", docs: manyDocs("x", 3) });
        await openIndex(page, "deletions");
        await expectDocumentIds(page, ["x00", "x01", "x02"]);
        assert.deepEqual(
          (await documentsTable(page).getByRole("columnheader").allInnerTexts()).map((text) => text.trim()),
          ["Select", "ID", "Text", "Metadata"],
        );
        await page.getByRole("checkbox", { name: "Select x00", exact: true }).check();
        await page.getByRole("checkbox", { name: "Select x02", exact: true }).check();
        await page.getByRole("button", { name: "Delete selected", exact: true }).click();
        const confirmDocs = page.getByRole("dialog", { name: "Delete 2 documents?", exact: true });
        await confirmDocs.getByRole("button", { name: "Delete", exact: true }).click();
        await expectDocumentIds(page, ["x01"]);
        assert.deepEqual(await storedIds(server, "deletions"), ["x01"]);

        await navigate(page, "Indexes");
        const deleteButton = page.getByRole("button", { name: "Delete index deletions", exact: true });
        const confirmIndex = page.getByRole("dialog", { name: "Delete index deletions?", exact: true });
        await deleteButton.click();
        await confirmIndex.getByRole("button", { name: "Cancel", exact: true }).click();
        await confirmIndex.waitFor({ state: "hidden" });
        await ok(server, { action: "getIndex", indexName: "deletions" });
        await deleteButton.click();
        await confirmIndex.getByRole("button", { name: "Delete", exact: true }).click();
        await indexesTable(page).getByRole("link", { name: "deletions", exact: true }).waitFor({ state: "detached" });
        const gone = await server.call({ action: "getIndex", indexName: "deletions" });
        await gone.body?.cancel();
        assert.equal(gone.status, 404);
      });

      await step("markup in ids, texts and metadata shows as text and never runs", async () => {
        const hostile: Doc = {
          id: '<b onmouseover="window.__xss=3">bold</b>',
          text: '<img src=x onerror="window.__xss=1">',
          metadata: { "<svg onload=window.__xss=2>": "<script>window.__xss=4</script>" },
        };
        await ok(server, { action: "createIndex", indexName: "xss", docs: [] });
        await openIndex(page, "xss");
        await page.getByRole("textbox", { name: "Documents (JSON or JSON Lines)", exact: true }).fill(
          JSON.stringify([hostile]),
        );
        await page.getByRole("button", { name: "Add pasted documents", exact: true }).click();
        await expectDocumentIds(page, [hostile.id]);
        const [row] = await tableRecords(documentsTable(page));
        assert.equal(row!.Text, hostile.text);
        assert.match(row!.Metadata!, /<svg onload=window.__xss=2>/);
        assert.match(row!.Metadata!, /<script>window.__xss=4<\/script>/);
        await documentsTable(page).getByText(hostile.text, { exact: true }).waitFor();

        await search(page, { query: "onerror", mode: "fulltext" });
        await eventually(async () =>
          assert.match((await results(page))[0] ?? "", /<img src=x onerror="window.__xss=1">/)
        );
        await page.getByRole("textbox", { name: "Document ID", exact: true }).fill(hostile.id);
        await page.getByRole("button", { name: "Look up", exact: true }).click();
        const found = page.getByRole("region", { name: "Looked-up document", exact: true });
        await found.getByText(hostile.text, { exact: true }).waitFor();
        await found.getByText(hostile.id, { exact: true }).waitFor();
        await page.getByText(hostile.id, { exact: true }).first().hover();

        const hostileName = '<img src=x onerror="window.__xss=5">';
        await ok(server, { action: "createIndex", indexName: hostileName, docs: [] });
        await openIndex(page, hostileName);
        await navigate(page, "Indexes");
        await page.getByRole("button", { name: `Delete index ${hostileName}`, exact: true }).click();
        await page.getByRole("dialog", { name: `Delete index ${hostileName}?`, exact: true })
          .getByRole("button", { name: "Cancel", exact: true }).click();
        await navigate(page, "Project");
        await page.getByRole("table", { name: "Project indexes", exact: true }).getByText(hostileName).waitFor();

        assert.equal(await page.evaluate(() => (globalThis as Record<string, unknown>).__xss), undefined);
        assert.equal(await page.locator("img").count(), 0, "an <img> element is in the page");
      });

      await step("the project view shows totals, its indexes and the server's health", async () => {
        await navigate(page, "Project");
        await page.getByRole("heading", { level: 1, name: "Project default", exact: true }).waitFor();
        assert.equal(new URL(page.url()).hash, "#/project");
        await eventually(async () => {
          const indexes = await ok<IndexView[]>(server, { action: "listIndexes" });
          const docs = indexes.reduce((sum, index) => sum + index.docCount, 0);
          const totals = new RegExp(`\\b${indexes.length} indexes, ${docs} documents\\b`);
          await page.getByText(totals).first().waitFor({ timeout: 1000 });
          const rows = await tableRecords(page.getByRole("table", { name: "Project indexes", exact: true }));
          assert.deepEqual(
            rows.map((row) => `${row.Name} ${row.Docs} ${row.Status}`).sort(),
            indexes.map((index) => `${index.name} ${index.docCount} ${index.status}`).sort(),
          );
        });
        await page.getByRole("heading", { name: "Server", exact: true }).waitFor();
        await page.getByText(/Health: ok/).first().waitFor();
        assert.match(await page.getByRole("main").innerText(), new RegExp(`\\b${server.pid}\\b`));
        await page.getByText(/Readiness: ready/).first().waitFor();
        assert.deepEqual(await keyPlaces(page, server.key), ["sessionStorage"]);
      });

      await step("the Indexes table shows 20 indexes a page", async () => {
        const extra = Array.from({ length: 12 }, (_, i) => `page-${String(i).padStart(2, "0")}`);
        await Promise.all(extra.map((indexName) => ok(server, { action: "createIndex", indexName, docs: [] })));
        const all = (await ok<IndexView[]>(server, { action: "listIndexes" })).map((index) => index.name);
        assert.ok(all.length > 20 && all.length <= 40, `${all.length} indexes`);
        await navigate(page, "Indexes");
        const previous = page.getByRole("button", { name: "Previous page", exact: true });
        const next = page.getByRole("button", { name: "Next page", exact: true });
        const names = async () => (await tableRecords(indexesTable(page))).map((row) => row.Name!);
        const first = await eventually(async () => {
          const shown = await names();
          assert.equal(shown.length, 20);
          assert.ok(await next.isEnabled(), "Next page is disabled");
          return shown;
        });
        assert.ok(await previous.isDisabled(), "Previous page is enabled on the first page");
        await next.click();
        const second = await eventually(async () => {
          const shown = await names();
          assert.equal(shown.length, all.length - 20);
          assert.ok(shown.every((name) => !first.includes(name)), `still the first page: ${shown}`);
          return shown;
        });
        assert.deepEqual([...first, ...second].sort(), [...all].sort());
        assert.ok(await next.isDisabled(), "Next page is enabled on the last page");
        await previous.click();
        await eventually(async () => assert.deepEqual(await names(), first));
      });

      await step("Sign out forgets the key", async () => {
        await page.getByRole("button", { name: "Sign out", exact: true }).click();
        await page.getByRole("heading", { name: "Sign in to quire", exact: true }).waitFor();
        assert.deepEqual(await keyPlaces(page, server.key), []);
        await page.reload();
        await page.getByRole("heading", { name: "Sign in to quire", exact: true }).waitFor();
      });

      await step("no page errors and no Content-Security-Policy violations happened", () => {
        const violations = consoleErrors.filter((text) => /Content Security Policy|Refused to/i.test(text));
        assert.deepEqual({ pageErrors, violations }, { pageErrors: [], violations: [] }, consoleErrors.join("\n"));
        return Promise.resolve();
      });
    } finally {
      await browser.close();
    }
  },
});
