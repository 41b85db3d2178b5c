/**
 * A cross-encoder worker thread (see cross_encoder_workers.ts): it loads one model on onnxruntime-node with one
 * onnxruntime thread, answers the model's window, then tokenizes and scores each batch of pairs it is sent, in turn.
 */
import { parentPort } from "node:worker_threads";
import { pairLogits, pairWindow } from "./cross_encoder_pairs.ts";
import type { BatchReply, LoadReply, WorkerBatch, WorkerLoad } from "./cross_encoder_workers.ts";
import { loadTransformersRuntime, type TextClassifier } from "./transformers_runtime.ts";

const port = parentPort!;

// transformers.js resolves a bundled file against `location.origin` wherever there is a `location`. A worker's is
// "null" (its module is a file), against which no URL resolves; the main thread has none, and so neither has this one.
Object.defineProperty(globalThis, "location", { value: undefined, configurable: true });

port.once("message", async ({ source, local, dtype, cacheDir, allowRemote }: WorkerLoad) => {
  let classifier: TextClassifier;
  let window: number;
  try {
    // One thread: the workers are the parallelism, each on a core of its own.
    const runtime = await loadTransformersRuntime("native", { cacheDir, allowRemote, threads: 1 });
    classifier = await runtime.openClassifier(source, { local, dtype });
    window = pairWindow(classifier);
  } catch (error) {
    port.postMessage({ error } satisfies LoadReply);
    return;
  }
  port.on("message", async ({ query, texts }: WorkerBatch) => {
    try {
      const logits = await pairLogits(classifier, window, query, texts);
      port.postMessage({ logits } satisfies BatchReply);
    } catch (error) {
      port.postMessage({ error } satisfies BatchReply);
    }
  });
  port.postMessage({ window } satisfies LoadReply);
});
