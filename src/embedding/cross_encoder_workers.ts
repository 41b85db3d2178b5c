/**
 * A cross-encoder on worker threads. onnxruntime-node runs a model on the thread that calls it, so on the main thread
 * a rerank would hold the event loop for its whole run, and onnxruntime's own threads for one run would spin against
 * the event loop. Here each worker holds its own copy of the model with one onnxruntime thread, and a rerank's batches
 * run on the workers at once, one core each. Batches wait in one queue and go to the first worker free, so the
 * batches of concurrent requests run in the order they came.
 */
import { Worker } from "node:worker_threads";
import type { ModelSpec } from "./model_registry.ts";
import { CrossEncoderError } from "./cross_encoder_pairs.ts";

/** What a worker loads: its first message. */
export interface WorkerLoad {
  /** A model directory (`local`, an absolute path) or a hub repo id. */
  source: string;
  local: boolean;
  dtype: NonNullable<ModelSpec["dtype"]>;
  cacheDir: string;
  allowRemote: boolean;
}

/** A batch of pairs for a worker to score: the later messages. */
export interface WorkerBatch {
  query: string;
  texts: string[];
}

/** A worker's answer to its load: the model's window, or why it cannot load. */
export type LoadReply = { window: number } | { error: unknown };

/** A worker's answer to a batch: one logit per text, or why it failed. */
export type BatchReply = { logits: Float32Array } | { error: unknown };

/** A batch waiting for its logits. */
interface Job extends WorkerBatch {
  done: PromiseWithResolvers<Float32Array>;
}

/** How many workers to start, which module they run, and whom to tell when one dies. */
export interface WorkerOptions {
  workers: number;
  /** Called once when a worker dies, after every batch has failed; the others are stopped too. */
  onStop?: () => void;
  /** The worker's module: cross_encoder_worker.ts unless a test gives another. */
  script?: URL;
}

/** One worker thread, whether its model has loaded, and the batch it runs. */
interface ModelThread {
  worker: Worker;
  state: "loading" | "ready" | "failed";
  job: Job | undefined;
}

/** A cross-encoder run on worker threads, each holding its own copy of the model. */
export class CrossEncoderWorkers {
  readonly #modelId: string;
  readonly #load: WorkerLoad;
  readonly #options: WorkerOptions;
  readonly #threads: ModelThread[] = [];
  readonly #queue: Job[] = [];
  #stopped: Error | undefined;

  private constructor(modelId: string, load: WorkerLoad, options: WorkerOptions) {
    this.#modelId = modelId;
    this.#load = load;
    this.#options = options;
  }

  /**
   * Starts one worker and resolves with the model's window once it has loaded; the other workers then load from the
   * files it read (a hub model is downloaded once) and take batches once they are ready.
   */
  static async open(
    modelId: string,
    load: WorkerLoad,
    options: WorkerOptions,
  ): Promise<{ workers: CrossEncoderWorkers; window: number }> {
    const workers = new CrossEncoderWorkers(modelId, load, options);
    try {
      const window = await workers.#start();
      for (let i = 1; i < options.workers; i++) workers.#start().catch(() => {});
      return { workers, window };
    } catch (error) {
      await workers.dispose();
      throw error;
    }
  }

  /** The model's logit of `query` with each of `texts`, from the first worker free. */
  run(query: string, texts: string[]): Promise<Float32Array> {
    if (this.#stopped !== undefined) return Promise.reject(this.#stopped);
    const job = { query, texts, done: Promise.withResolvers<Float32Array>() };
    this.#queue.push(job);
    this.#dispatch();
    return job.done.promise;
  }

  /** Stops every worker; batches still waiting fail. */
  async dispose(): Promise<void> {
    this.#stop(new CrossEncoderError(`Reranker "${this.#modelId}" was closed`));
    await Promise.all(this.#threads.map(({ worker }) => worker.terminate()));
  }

  /** Starts a worker; resolves with the model's window once it has loaded, and rejects with why it cannot load. */
  #start(): Promise<number> {
    const worker = new Worker(this.#options.script ?? new URL("./cross_encoder_worker.ts", import.meta.url));
    const thread: ModelThread = { worker, state: "loading", job: undefined };
    this.#threads.push(thread);
    const loaded = Promise.withResolvers<number>();
    worker.on("message", (reply: LoadReply | BatchReply) => {
      if (thread.state === "loading") this.#loaded(thread, reply as LoadReply, loaded);
      else this.#answered(thread, reply as BatchReply);
    });
    // A worker that dies fails its batch and every other, and stops the others: the next request loads the model again.
    const died = (cause: unknown) => {
      if (this.#stopped !== undefined || thread.state === "failed") return;
      const error = new CrossEncoderError(`Reranker "${this.#modelId}" stopped`, { cause });
      loaded.reject(error);
      this.#stop(error);
      for (const { worker } of this.#threads) worker.terminate();
      this.#options.onStop?.();
    };
    worker.on("error", died);
    worker.on("exit", (code: number) => died(new Error(`A worker exited with code ${code}`)));
    worker.postMessage(this.#load);
    // The first load keeps the process alive, as a rerank waits for it; the others load in the background.
    if (this.#threads.length > 1) worker.unref();
    return loaded.promise;
  }

  /** Takes a worker's answer to its load: it is ready for batches, or it is dropped. */
  #loaded(thread: ModelThread, reply: LoadReply, loaded: PromiseWithResolvers<number>): void {
    if ("window" in reply) {
      thread.state = "ready";
      thread.worker.unref();
      loaded.resolve(reply.window);
      this.#dispatch();
      return;
    }
    // The first worker's failure fails the model; another's leaves the workers that did load to serve.
    thread.state = "failed";
    thread.worker.terminate();
    loaded.reject(reply.error);
  }

  /** Takes a worker's answer to its batch, and gives it the next. */
  #answered(thread: ModelThread, reply: BatchReply): void {
    const job = thread.job;
    if (job === undefined) return; // Failed already, when the workers stopped.
    thread.job = undefined;
    thread.worker.unref();
    if ("logits" in reply) job.done.resolve(reply.logits);
    else job.done.reject(new CrossEncoderError(`Reranker "${this.#modelId}" failed to score`, { cause: reply.error }));
    this.#dispatch();
  }

  /** Gives the waiting batches to the workers that are ready and free. */
  #dispatch(): void {
    for (const thread of this.#threads) {
      if (this.#queue.length === 0) return;
      if (thread.state !== "ready" || thread.job !== undefined || this.#stopped !== undefined) continue;
      const job = this.#queue.shift()!;
      thread.job = job;
      // A worker with a batch keeps the process alive until it answers; an idle one does not.
      thread.worker.ref();
      thread.worker.postMessage({ query: job.query, texts: job.texts } satisfies WorkerBatch);
    }
  }

  /** Fails every batch waiting or running with `error`, and every later one. */
  #stop(error: Error): void {
    this.#stopped ??= error;
    for (const job of this.#queue.splice(0)) job.done.reject(error);
    for (const thread of this.#threads) {
      thread.job?.done.reject(error);
      thread.job = undefined;
    }
  }
}
