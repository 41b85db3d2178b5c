/**
 * The dashboard's "Analytics" view in headless Chromium: reached from an index's view, it shows a search that found
 * nothing; "Add synonym…" (by keyboard) and "Pin results…" write the index's settings, "Try it" then finds results in
 * the playground; and a top query shows its click-through once the application reports a click.
 */
import assert from "node:assert/strict";
import type { Locator, Page } from "playwright-core";
import { indexPage, launchBrowser } from "../_browser.ts";
import { startTestServer } from "../_helpers.ts";

Deno.test({
  name: "the Analytics view shows a no-result query, adds a synonym for it, and Try it then finds results",
  // playwright-core keeps its pipe to Chromium and timers of its own between steps.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using server = await startTestServer({ env: { ANALYTICS_FLUSH_INTERVAL: "100ms" } });
    await server.ok({
      action: "createIndex",
      indexName: "shop",
      docs: [
        { id: "couch-1", text: "A grey couch with three cushions" },
        { id: "lamp-1", text: "A reading lamp of brass" },
      ],
      options: { wait: true },
    });
    // Vector and hybrid searches find every document: these are full-text ones, as "Try it" runs them.
    const search = (query: string) => server.ok({ action: "search", indexName: "shop", query, mode: "fulltext" });
    for (const query of ["couch", "couch", "lamp", "Sofa", "sofa", "bookshelf"]) await search(query);
    await server.ok({ action: "recordClick", indexName: "shop", query: "couch", id: "couch-1", position: 1 });

    const browser = await launchBrowser();
    try {
      const { page, errors } = await indexPage(browser, server, "shop");
      await page.getByRole("link", { name: "Analytics: searches and queries" }).click();
      await page.getByRole("heading", { name: "Analytics of shop", level: 1 }).waitFor();

      // Searches reach the store within the flush interval; "Refresh" shows them.
      const noResults = page.getByRole("table", { name: "No-result queries" });
      await refreshUntil(page, () => noResults.getByRole("row").filter({ hasText: "bookshelf" }).count());
      assert.deepEqual(await rowsOf(noResults), [
        ["Query", "Searches", "In settings", "Actions"],
        ["sofa", "2", "—", "Try it Add synonym… Pin results…"],
        ["bookshelf", "1", "—", "Try it Add synonym… Pin results…"],
      ]);
      const [heading, ...top] = await rowsOf(page.getByRole("table", { name: "Top queries" }));
      assert.deepEqual(heading, ["Query", "Searches", "Avg results", "Clicks", "Click-through", "Mean position"]);
      assert.deepEqual(top.map((row) => row[1]), ["2", "2", "1", "1"], "the most searched first");
      assert.deepEqual(top.toSorted((a, b) => a[0]!.localeCompare(b[0]!)), [
        ["bookshelf", "1", "0", "0", "0%", "—"],
        ["couch", "2", "1", "1", "50%", "1"],
        ["lamp", "1", "1", "0", "0%", "—"],
        ["sofa", "2", "0", "0", "0%", "—"],
      ]);
      const summary = await page.locator(".summary").innerText();
      assert.match(summary, /Searches\s+6\b/);
      assert.match(summary, /Found nothing\s+3 \(50%\)/);
      assert.match(summary, /p50\s+[\d.,]+ ms/);
      const chart = page.getByRole("img", { name: /^Searches per day from .*: 6 in all, 3 found nothing/ });
      assert.equal(await chart.locator("rect.searches").count(), 30, "a bar for each of the last 30 days");

      // "Add synonym…" by keyboard: the dialog opens on its field, Enter saves, and the focus comes back.
      await page.getByRole("button", { name: "Add synonym for sofa" }).focus();
      await page.keyboard.press("Enter");
      const dialog = page.getByRole("dialog", { name: 'Add a synonym for "sofa"' });
      await dialog.waitFor();
      assert.equal(await page.evaluate(`document.activeElement.getAttribute("name")`), "list");
      await page.keyboard.type("couch");
      await page.keyboard.press("Enter");
      await dialog.waitFor({ state: "detached" });
      const sofa = noResults.getByRole("row").filter({ hasText: "sofa" });
      await sofa.getByRole("cell", { name: "Synonyms: couch" }).waitFor();
      assert.equal(await page.evaluate(`document.activeElement.getAttribute("aria-label")`), "Add synonym for sofa");

      await page.getByRole("button", { name: "Pin results for bookshelf" }).click();
      await page.getByRole("dialog", { name: 'Pin results for "bookshelf"' }).waitFor();
      await page.getByLabel("Document ids").fill("lamp-1, couch-1");
      await page.getByRole("button", { name: "Pin results", exact: true }).click();
      await noResults.getByRole("cell", { name: "Pinned: lamp-1, couch-1" }).waitFor();
      const index = await server.ok<{ settings: unknown }>({ action: "getIndex", indexName: "shop" });
      assert.deepEqual(index.settings, {
        synonyms: [{ from: "sofa", to: ["couch"] }],
        pins: [{ query: "bookshelf", ids: ["lamp-1", "couch-1"] }],
      });

      // "Try it" opens the playground with the query, run as a full-text search: the synonym finds the couch.
      await sofa.getByRole("link", { name: "Try it: sofa" }).click();
      await page.getByRole("heading", { name: "shop", level: 1 }).waitFor();
      await page.getByRole("status").filter({ hasText: "1 matches" }).waitFor();
      assert.equal(await page.getByLabel("Search", { exact: true }).inputValue(), "sofa");
      assert.equal(await page.getByLabel("Mode").inputValue(), "fulltext");
      const hits = await page.getByRole("list", { name: "Results" }).getByRole("listitem").allInnerTexts();
      assert.equal(hits.length, 1);
      assert.match(hits[0]!, /couch-1/);
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  },
});

/** Clicks "Refresh" until `found` counts something, for at most 10 s. */
async function refreshUntil(page: Page, found: () => Promise<number>): Promise<void> {
  for (let tries = 0; tries < 50; tries++) {
    if (await found() > 0) return;
    await page.getByRole("button", { name: "Refresh" }).click();
    await page.waitForTimeout(200);
  }
  throw new Error("The view never showed the searches");
}

/** The cells of a table's rows (headings first), as text. */
async function rowsOf(table: Locator): Promise<string[][]> {
  const rows = await table.getByRole("row").all();
  return await Promise.all(
    rows.map(async (row) =>
      (await row.getByRole("cell").or(row.getByRole("columnheader")).allInnerTexts()).map((text) =>
        text.replace(/\s+/g, " ").trim()
      )
    ),
  );
}
