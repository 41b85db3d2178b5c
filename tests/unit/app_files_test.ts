/** Unit: files shipped with the app are found in the working directory first, then beside `main.ts`. */
import assert from "node:assert/strict";
import { findAppFile } from "../../src/util/app_files.ts";

const REPO = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");

Deno.test("a relative path is found in the working directory, else in the app's directory", async () => {
  const elsewhere = await Deno.makeTempDir({ prefix: "quire-cwd-" });
  const previous = Deno.cwd();
  Deno.chdir(elsewhere);
  try {
    assert.equal(await findAppFile("deno.json", "file"), `${REPO}/deno.json`, "from the app's directory");
    assert.equal(await findAppFile("src", "directory"), `${REPO}/src`);
    assert.equal(await findAppFile("deno.json", "directory"), undefined, "a file is not a directory");
    assert.equal(await findAppFile("no-such-model", "directory"), undefined);
    await Deno.writeTextFile(`${elsewhere}/deno.json`, "{}");
    assert.equal(await findAppFile("deno.json", "file"), `${elsewhere}/deno.json`, "the working directory wins");
    assert.equal(await findAppFile(`${REPO}/README.md`, "file"), `${REPO}/README.md`, "absolute paths stay");
  } finally {
    Deno.chdir(previous);
    await Deno.remove(elsewhere, { recursive: true });
  }
});
