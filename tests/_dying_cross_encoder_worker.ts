/**
 * A stand-in for src/embedding/cross_encoder_worker.ts that dies at its first batch, for the tests of what a worker's
 * death does: a batch whose query is "exit" ends the worker with code 3; any other throws an uncaught error.
 */
import process from "node:process";
import { parentPort } from "node:worker_threads";
import type { LoadReply, WorkerBatch } from "../src/embedding/cross_encoder_workers.ts";

parentPort!.once("message", () => {
  parentPort!.on("message", ({ query }: WorkerBatch) => {
    if (query === "exit") process.exit(3);
    throw new Error(`The worker failed on "${query}"`);
  });
  parentPort!.postMessage({ window: 16 } satisfies LoadReply);
});
