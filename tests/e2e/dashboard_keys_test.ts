/**
 * The dashboard's "Keys" view in headless Chromium: a key made there works within its scope only, its secret is shown
 * once and kept nowhere, and it stops working once deleted there.
 */
import assert from "node:assert/strict";
import type { Locator, Page } from "playwright-core";
import { ACTIONS } from "../../src/api/request_schemas.ts";
import type { ListedKey } from "../../src/api/key_api_types.ts";
import { createKeyFields, KEY_ACTIONS } from "../../src/dashboard/assets/key_form.js";
import { launchBrowser } from "../_browser.ts";
import { startTestServer } from "../_helpers.ts";

/** How long a deleted key may keep working: `METADATA_CACHE_MS` (250 by default) and a margin. */
const DELETION_MS = 400;

Deno.test("the key form offers every action of the API", () => {
  assert.deepEqual(KEY_ACTIONS, [...ACTIONS]);
});

Deno.test("the key form's values become createKey fields, and a scope with no action or index is refused", () => {
  const values = { description: "", allActions: true, actions: [], indexes: "*", expires: "", rate: "" };
  assert.deepEqual(createKeyFields(values), { actions: ["*"], indexes: ["*"] });
  assert.deepEqual(
    createKeyFields({
      description: " storefront ",
      allActions: true,
      actions: ["search", "listKeys"],
      indexes: " products, faq-* ,",
      expires: "2031-05-06T07:08",
      rate: "600",
    }),
    {
      description: "storefront",
      actions: ["*", "listKeys"],
      indexes: ["products", "faq-*"],
      expiresAt: new Date("2031-05-06T07:08").toISOString(),
      requestsPerMinute: 600,
    },
  );
  assert.deepEqual(createKeyFields({ ...values, allActions: false, actions: ["search"] }).actions, ["search"]);
  assert.throws(() => createKeyFields({ ...values, allActions: false }), /Choose at least one action/);
  assert.throws(() => createKeyFields({ ...values, indexes: " , " }), /Name at least one index/);
});

Deno.test({
  name: "a key made in the Keys view searches only its indexes, shows its secret once, and dies when deleted there",
  // playwright-core keeps its pipe to Chromium and timers of its own between steps.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using server = await startTestServer();
    await server.ok({
      action: "createIndex",
      indexName: "products-en",
      docs: [{ id: "p1", text: "red running shoe" }],
      options: { wait: true },
    });
    const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]) as CryptoKeyPair;
    const publicKey = await crypto.subtle.exportKey("jwk", pair.publicKey);
    const tenant = await server.ok<ListedKey>({ action: "createKey", description: "tenants", publicKey });
    const as = (secret: string) => ({ "x-project-key": secret });
    const search = { action: "search", indexName: "products-en", query: "shoe", mode: "fulltext" };

    const browser = await launchBrowser();
    try {
      const context = await browser.newContext();
      await context.grantPermissions(["clipboard-read", "clipboard-write"]);
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      await page.goto(new URL("/ui#/keys", server.url).href);
      await page.getByLabel("Key", { exact: true }).fill(server.key);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.getByRole("heading", { level: 1, name: "Keys", exact: true }).waitFor();
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Keys", exact: true }).waitFor();
      const tenantRow = await rowOf(page, tenant.keyId);
      assert.match(tenantRow.ID!, /public key for tenant tokens/);
      assert.equal(tenantRow["Last used"], "never");

      const allActions = page.getByRole("checkbox", { name: "All actions (*)", exact: true });
      assert.ok(await allActions.isChecked(), "all actions is the default");
      assert.equal(await page.getByRole("textbox", { name: "Indexes", exact: true }).inputValue(), "*");
      await allActions.uncheck();
      await page.getByRole("button", { name: "Create key", exact: true }).click();
      await page.getByRole("alert").filter({ hasText: "Choose at least one action" }).waitFor();

      await page.getByRole("textbox", { name: "Description", exact: true }).fill("storefront search");
      await page.getByRole("checkbox", { name: "search", exact: true }).check();
      await page.getByRole("textbox", { name: "Indexes", exact: true }).fill("products-*");
      await page.getByLabel("Expires", { exact: true }).fill("2031-05-06T07:08");
      await page.getByRole("spinbutton", { name: "Requests per minute", exact: true }).fill("600");
      await page.getByRole("button", { name: "Create key", exact: true }).click();
      const secretField = page.getByRole("textbox", { name: "Secret key", exact: true });
      const secret = await secretField.inputValue();
      assert.match(secret, /^qk_/);
      assert.ok(await secretField.evaluate((input) => (input as unknown as { readOnly: boolean }).readOnly));
      await page.getByText("it will not be shown again").waitFor();
      await page.getByRole("button", { name: "Copy", exact: true }).click();
      await page.getByRole("status").filter({ hasText: "Copied" }).waitFor();
      assert.equal(await page.evaluate("navigator.clipboard.readText()"), secret);

      const [created] = (await server.ok<ListedKey[]>({ action: "listKeys" }))
        .filter((key) => key.description === "storefront search");
      assert.ok(created);
      assert.deepEqual([created.actions, created.indexes, created.requestsPerMinute], [
        ["search"],
        ["products-*"],
        600,
      ]);
      const expiresAt = await page.evaluate(() => new Date("2031-05-06T07:08").toISOString());
      assert.equal(created.expiresAt, expiresAt);
      const row = await rowOf(page, created.keyId);
      assert.deepEqual(
        [row.Description, row.Actions, row.Indexes, row.Rate, row["Last used"]],
        ["storefront search", "search", "products-*", "600/min", "never"],
      );

      const allowed = await server.call(search, as(secret));
      assert.equal(allowed.status, 200, await allowed.clone().text());
      await allowed.body?.cancel();
      const outside = await server.call({ action: "deleteIndex", indexName: "products-en" }, as(secret));
      assert.equal(outside.status, 403);
      await outside.body?.cancel();

      await page.reload();
      await rowOf(page, created.keyId);
      // A string, evaluated in the page: this file's types have no DOM.
      const places: Record<string, string> = await page.evaluate(`({
        page: document.documentElement.outerHTML,
        values: [...document.querySelectorAll("input, textarea")].map((input) => input.value).join("\\n"),
        storage: JSON.stringify([Object.entries(sessionStorage), Object.entries(localStorage)]),
      })`);
      for (const [place, text] of Object.entries({ ...places, url: page.url() })) {
        assert.ok(!text.includes(secret), `the secret is in the ${place} after a reload`);
      }

      await page.getByRole("button", { name: `Delete key ${created.keyId}`, exact: true }).click();
      await page.getByRole("dialog", { name: `Delete key ${created.keyId}?`, exact: true })
        .getByRole("button", { name: "Delete", exact: true }).click();
      await page.getByRole("status").filter({ hasText: `Deleted key "${created.keyId}"` }).waitFor();
      const deletedAt = Date.now();
      assert.ok(!(await keyRecords(page)).some((record) => record.ID!.includes(created.keyId)));
      for (;;) {
        const response = await server.call(search, as(secret));
        await response.body?.cancel();
        if (response.status === 403) break;
        assert.ok(Date.now() - deletedAt < DELETION_MS, `the deleted key still answers ${response.status}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
    }
  },
});

/** The rows of the table "Keys", as records from column header to the cell's text. */
async function keyRecords(page: Page): Promise<Record<string, string>[]> {
  const table: Locator = page.getByRole("table", { name: "Keys", exact: true });
  // `DomNode` is what this reads of the page's DOM, which this file's types lack.
  type DomNode = { innerText: string; querySelectorAll(selector: string): Iterable<DomNode> };
  const { headers, rows } = await table.evaluate((element) => {
    const texts = (cells: Iterable<DomNode>) => [...cells].map((cell) => cell.innerText.trim());
    const node = element as unknown as DomNode;
    return {
      headers: texts(node.querySelectorAll("thead th")),
      rows: [...node.querySelectorAll("tbody tr")].map((row) => texts(row.querySelectorAll("td"))),
    };
  });
  return rows.filter((cells) => cells.length === headers.length)
    .map((cells) => Object.fromEntries(headers.map((header, i) => [header, cells[i]!])));
}

/** The record of the key `keyId` in the table "Keys"; waits for it to be listed. */
async function rowOf(page: Page, keyId: string): Promise<Record<string, string>> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const record = (await keyRecords(page)).find((row) => row.ID!.split(/\s/)[0] === keyId);
    if (record !== undefined) return record;
    assert.ok(Date.now() < deadline, `no row for key "${keyId}" in the Keys table`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
