/**
 * `deno task screenshots`: takes the README's pictures of the dashboard (sign-in, indexes, documents, search) from a
 * real server and Chromium, over licence texts, into `docs/screenshots/`.
 */
import { launchBrowser } from "../tests/_browser.ts";
import { licenceParagraphs } from "../tests/_licence_corpus.ts";
import { ok, serverEnvironment, startServerProcess } from "../tests/_server_process.ts";

const OUT = new URL("../docs/screenshots/", import.meta.url).pathname;

await Deno.mkdir(OUT, { recursive: true });
await using server = await startServerProcess(await serverEnvironment());
const docs = licenceParagraphs(["GPL-3", "Apache-2.0", "MPL-2.0"]);
await ok(server, { action: "createIndex", indexName: "licences", docs: [], options: { wait: true } });
for (let i = 0; i < docs.length; i += 100) {
  await ok(server, { action: "addDocs", indexName: "licences", docs: docs.slice(i, i + 100), options: { wait: true } });
}
await ok(server, { action: "createIndex", indexName: "notes", docs: [], options: { wait: true, language: "german" } });

const browser = await launchBrowser();
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 760 } });
  await page.goto(new URL("/ui", server.url).href);
  await page.getByLabel("Project").fill("default");
  await page.getByLabel("Key").fill(server.key);
  await page.screenshot({ path: `${OUT}sign_in.png` });
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("link", { name: "licences" }).waitFor();
  await page.screenshot({ path: `${OUT}indexes.png` });

  await page.getByRole("link", { name: "licences" }).click();
  await page.getByRole("cell", { name: "Apache-2.0-000", exact: true }).waitFor();
  await section(page, "Documents").screenshot({ path: `${OUT}documents.png` });

  await page.getByRole("searchbox", { name: "Search" }).fill("warranty of merchantability");
  await page.getByLabel("Mode").selectOption("hybrid");
  await page.getByLabel("Limit").fill("3");
  await page.getByLabel("Facets").fill("licence");
  await page.getByRole("button", { name: "Search", exact: true }).click();
  await page.getByRole("list", { name: "Results" }).getByRole("listitem").first().waitFor();
  await section(page, "Search").screenshot({ path: `${OUT}search.png` });
} finally {
  await browser.close();
}
console.log(`Screenshots in ${OUT}`);

function section(page: import("playwright-core").Page, heading: string) {
  return page.locator("section").filter({ has: page.getByRole("heading", { name: heading, exact: true, level: 2 }) });
}
