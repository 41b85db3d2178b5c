/** The README and docs/ link only to what a fresh clone has: every relative link resolves to a file or folder. */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

/** The Markdown files whose links must resolve: the README and every page of docs/. */
async function markdownFiles(): Promise<string[]> {
  const files = ["README.md"];
  for await (const entry of Deno.readDir(join(REPO, "docs"))) {
    if (entry.isFile && entry.name.endsWith(".md")) files.push(`docs/${entry.name}`);
  }
  return files;
}

/** The relative targets of a Markdown text's links and images, without their `#fragment`, outside code. */
function relativeLinks(markdown: string): string[] {
  const prose = markdown.replace(/```[^]*?```/g, "").replace(/`[^`\n]*`/g, "");
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map(([, target]) => target!.split("#")[0]!)
    .filter((target) => target !== "" && !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

Deno.test("every relative link in README.md and docs/ resolves", async () => {
  const files = await markdownFiles();
  assert.ok(files.length >= 6, `README and the docs pages: ${files.join(", ")}`);
  const broken: string[] = [];
  for (const file of files) {
    for (const target of relativeLinks(await Deno.readTextFile(join(REPO, file)))) {
      const path = join(REPO, dirname(file), decodeURIComponent(target));
      if (!path.startsWith(REPO)) broken.push(`${file}: ${target} leaves the repository`);
      else await Deno.stat(path).catch(() => broken.push(`${file}: ${target}`));
    }
  }
  assert.deepEqual(broken, []);
});

Deno.test("the link check sees links and images, and skips code, fragments and absolute addresses", () => {
  const markdown = "[a](docs/api.md#errors) ![b](docs/x.png) `[c](no.md)` [d](https://example.com) [e](#top)\n" +
    "```\n[f](nor.md)\n```";
  assert.deepEqual(relativeLinks(markdown), ["docs/api.md", "docs/x.png"]);
});
