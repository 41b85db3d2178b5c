/**
 * The dashboard's "Settings" view in headless Chromium: reached from an index's view, it shows the index's synonyms
 * and pins as lines, names the line of a malformed one, and saves them with `updateSettings`, after which the search
 * playground finds by the synonym and marks the pinned hit.
 */
import assert from "node:assert/strict";
import { indexPage, launchBrowser } from "../_browser.ts";
import { startTestServer } from "../_helpers.ts";
import { parsePins, parseSynonyms, pinsText, synonymsText } from "../../src/dashboard/assets/settings_view.js";

Deno.test("the settings view's lines become synonym entries and pins, and back", () => {
  const synonyms = parseSynonyms("sofa, couch , settee\n\n nyc => new york, new york city\n");
  assert.deepEqual(synonyms, [
    { words: ["sofa", "couch", "settee"] },
    { from: "nyc", to: ["new york", "new york city"] },
  ]);
  assert.equal(synonymsText(synonyms), "sofa, couch, settee\nnyc => new york, new york city");
  const pins = parsePins("refund => policy-7, faq-3");
  assert.deepEqual(pins, [{ query: "refund", ids: ["policy-7", "faq-3"] }]);
  assert.equal(pinsText(pins), "refund => policy-7, faq-3");
  assert.throws(() => parseSynonyms("sofa, couch\nlonely"), /Synonyms, line 2: list two or more words/);
  assert.throws(() => parseSynonyms("=> york"), /Synonyms, line 1/);
  assert.throws(() => parsePins("refund policy-7"), /Pins, line 1: write the query/);
});

Deno.test({
  name: "the Settings view of an index saves synonyms and pins that search then uses",
  // playwright-core keeps its pipe to Chromium and timers of its own between steps.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using server = await startTestServer();
    await server.ok({
      action: "createIndex",
      indexName: "shop",
      docs: [
        { id: "sofa-1", text: "A grey sofa with three cushions" },
        { id: "chair-1", text: "A kitchen chair of pine" },
        { id: "policy-7", text: "Our returns policy" },
        { id: "refund-1", text: "How to get a refund" },
      ],
      options: { wait: true },
    });
    await server.ok({
      action: "updateSettings",
      indexName: "shop",
      settings: { synonyms: [{ words: ["seat", "chair"] }] },
    });
    const browser = await launchBrowser();
    try {
      const { page, errors } = await indexPage(browser, server, "shop");
      await page.getByRole("link", { name: "Settings: synonyms and pins" }).click();
      await page.getByRole("heading", { name: "Settings of shop", level: 1 }).waitFor();
      const synonyms = page.getByLabel("Synonyms", { exact: true });
      const pins = page.getByLabel("Pins", { exact: true });
      await page.locator("textarea[name=synonyms]:enabled").waitFor();
      assert.equal(await synonyms.inputValue(), "seat, chair", "the stored settings are shown");

      // A malformed line is named, and nothing is saved.
      await synonyms.fill("seat, chair\nsofa");
      await page.getByRole("button", { name: "Save settings" }).click();
      assert.match(await page.getByRole("alert").innerText(), /Synonyms, line 2: list two or more words/);

      await synonyms.fill("seat, chair\ncouch => sofa");
      await pins.fill("refunds => policy-7, missing-1");
      await page.getByRole("button", { name: "Save settings" }).click();
      await page.getByRole("status").filter({ hasText: "Saved: 2 synonym entries, 1 pins" }).waitFor();
      const index = await server.ok<{ settings: unknown }>({ action: "getIndex", indexName: "shop" });
      assert.deepEqual(index.settings, {
        synonyms: [{ words: ["seat", "chair"] }, { from: "couch", to: ["sofa"] }],
        pins: [{ query: "refunds", ids: ["policy-7", "missing-1"] }],
      });

      // Back in the index's view, the playground finds by the synonym and marks the pinned hit.
      await page.getByRole("link", { name: "Back to shop" }).click();
      await page.getByRole("heading", { name: "shop", level: 1 }).waitFor();
      const results = page.getByRole("list", { name: "Results" }).getByRole("listitem");
      await page.getByLabel("Mode").selectOption("fulltext");
      await page.getByLabel("Search", { exact: true }).fill("couch");
      await page.keyboard.press("Enter");
      await page.getByRole("status").filter({ hasText: "1 matches" }).waitFor();
      assert.match(await results.first().innerText(), /sofa-1/);
      await page.getByLabel("Search", { exact: true }).fill("refund");
      await page.keyboard.press("Enter");
      await page.getByRole("status").filter({ hasText: "2 matches" }).waitFor();
      const first = await results.first().innerText();
      assert.match(first, /policy-7/);
      assert.match(first, /Pinned/);
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  },
});
