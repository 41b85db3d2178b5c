/**
 * The default model is warmed at the start only where it is used: a store whose indexes all take client vectors never
 * loads onnxruntime, which shows in the process's mapped files.
 */
import assert from "node:assert/strict";
import { mappedFiles, testModels } from "../_helpers.ts";
import { ok, serverEnvironment, startServerProcess } from "../_server_process.ts";

const ONNXRUNTIME = /libonnxruntime/;

/** Whether onnxruntime comes to be mapped into process `pid` within `ms`. */
async function loadsOnnxruntime(pid: number, ms: number): Promise<boolean> {
  for (const started = performance.now(); performance.now() - started < ms;) {
    if (ONNXRUNTIME.test(await mappedFiles(pid))) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

Deno.test("the default model is warmed at the start in a new store or one that uses it, not in one of client vectors", {
  ignore: Deno.build.os !== "linux",
}, async () => {
  const env = await serverEnvironment();
  await Deno.writeTextFile(
    env.MODELS_FILE!,
    JSON.stringify({ ...await testModels(), "ext-8": { dimensions: 8, version: "ext-v1" } }),
  );
  let key: string;
  {
    await using fresh = await startServerProcess(env);
    key = fresh.key;
    assert.ok(await loadsOnnxruntime(fresh.pid, 30_000), "a new store warms the default model");
    const vector = [1, 0, 0, 0, 0, 0, 0, 0];
    await ok(fresh, {
      action: "createIndex",
      indexName: "vectors",
      modelId: "ext-8",
      docs: [{ id: "a", text: "", vector }],
    });
  }
  {
    await using clientVectors = await startServerProcess(env, key);
    await ok(clientVectors, {
      action: "search",
      indexName: "vectors",
      mode: "vector",
      vector: [0, 1, 0, 0, 0, 0, 0, 0],
    });
    assert.equal(await loadsOnnxruntime(clientVectors.pid, 1_500), false, "no index uses the default model");
    await ok(clientVectors, { action: "createIndex", indexName: "texts", docs: [{ id: "t", text: "words to embed" }] });
  }
  await using modelUsed = await startServerProcess(env, key);
  assert.ok(await loadsOnnxruntime(modelUsed.pid, 30_000), "an index uses the default model");
});
