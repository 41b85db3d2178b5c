/**
 * `deno task screenshots`: takes the README's pictures of the dashboard (sign-in, indexes, documents, search,
 * analytics) from a real server and Chromium, over licence texts and a few scripted searches, into `docs/screenshots/`.
 */
import { launchBrowser } from "../tests/_browser.ts";
import { licenceParagraphs } from "../tests/_licence_corpus.ts";
import { ok, serverEnvironment, startServerProcess } from "../tests/_server_process.ts";

const OUT = new URL("../docs/screenshots/", import.meta.url).pathname;

await Deno.mkdir(OUT, { recursive: true });
// Searches reach the analytics within the flush interval.
await using server = await startServerProcess({ ...await serverEnvironment(), ANALYTICS_FLUSH_INTERVAL: "200ms" });
const docs = licenceParagraphs(["GPL-3", "Apache-2.0", "MPL-2.0"]);
await ok(server, { action: "createIndex", indexName: "licences", docs: [], options: { wait: true } });
for (let i = 0; i < docs.length; i += 100) {
  await ok(server, { action: "addDocs", indexName: "licences", docs: docs.slice(i, i + 100), options: { wait: true } });
}
await ok(server, { action: "createIndex", indexName: "notes", docs: [], options: { wait: true, language: "german" } });
const searches = await searchLicences();

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

  await analyticsShown(searches + 1);
  await page.getByRole("link", { name: "Analytics: searches and queries" }).click();
  await page.getByRole("table", { name: "No-result queries" }).waitFor();
  await page.locator("main").screenshot({ path: `${OUT}analytics.png` });
} finally {
  await browser.close();
}
console.log(`Screenshots in ${OUT}`);

/**
 * Full-text searches of the licences as an application would send them, some finding nothing, and clicks on a few
 * hits; returns how many searches.
 */
async function searchLicences(): Promise<number> {
  const queries = {
    "warranty": 9,
    "patent license": 7,
    "source code": 6,
    "termination": 4,
    "trademark": 3,
    "refund policy": 3,
    "liability": 2,
    "gdpr": 2,
    "chargeback": 1,
  };
  let count = 0;
  for (const [query, times] of Object.entries(queries)) {
    for (let i = 0; i < times; i++) {
      const { hits } = await ok<{ hits: { id: string }[] }>(server, {
        action: "search",
        indexName: "licences",
        query,
        mode: "fulltext",
      });
      count++;
      // Some searches end in a click on one of the first hits.
      const position = i % 3 + 1;
      if (i % 2 === 0 && hits.length >= position) {
        const id = hits[position - 1]!.id;
        await ok(server, { action: "recordClick", indexName: "licences", query, id, position });
      }
    }
  }
  return count;
}

/** Waits until the licences' analytics count `searches`. */
async function analyticsShown(searches: number): Promise<void> {
  for (;;) {
    const report = await ok<{ searches: number }>(server, { action: "searchAnalytics", indexName: "licences" });
    if (report.searches >= searches) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function section(page: import("playwright-core").Page, heading: string) {
  return page.locator("section").filter({ has: page.getByRole("heading", { name: heading, exact: true, level: 2 }) });
}
