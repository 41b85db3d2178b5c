/** Launches Debian's Chromium through `playwright-core`, for the dashboard's end-to-end tests. */
import type { Browser, Page } from "playwright-core";

/** Where Chromium is looked for, first `CHROMIUM_PATH`. */
const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];

/** The first of `candidates` that exists; throws, saying how to install Chromium, when none does. */
export function chromiumPath(
  candidates: string[] = [Deno.env.get("CHROMIUM_PATH"), ...CANDIDATES].filter((path) => path !== undefined),
): string {
  for (const path of candidates) {
    try {
      if (Deno.statSync(path).isFile) return path;
    } catch {
      // Not here; try the next.
    }
  }
  throw new Error(
    `Chromium is not installed (looked at ${candidates.join(", ")}): run "apt-get install chromium" on Debian, ` +
      "or set CHROMIUM_PATH to a Chromium or Chrome executable",
  );
}

/** A headless Chromium; close it when done. */
export async function launchBrowser(): Promise<Browser> {
  // Loaded here, not above: at import, playwright-core asks whether it runs under WSL by probing
  // /proc/sys/fs/binfmt_misc/WSLInterop, which Deno grants only to --allow-all. This variable (is-wsl's own test
  // switch) skips that probe, and the tests keep the permissions of `deno task test`.
  Deno.env.set("__IS_WSL_TEST__", "1");
  const { chromium } = await import("playwright-core");
  // No sandbox: CI runs as root, where Chromium refuses to start with one.
  return await chromium.launch({ executablePath: chromiumPath(), args: ["--no-sandbox"] });
}

/** A dashboard page signed in with `key` at the view of index `indexName`, and the page errors it meets. */
export async function indexPage(
  browser: Browser,
  server: { url: string; key: string },
  indexName: string,
): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(new URL(`/ui#/indexes/${encodeURIComponent(indexName)}`, server.url).href);
  await page.getByLabel("Key", { exact: true }).fill(server.key);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("heading", { name: indexName, level: 1 }).waitFor();
  return { page, errors };
}
