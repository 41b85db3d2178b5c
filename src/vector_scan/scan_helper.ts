/**
 * A second thread for the scan kernels. Searches run on the main thread, so a second core would otherwise sit idle
 * during them. A kernel pass over many rows is cut into chunks in the same shared WebAssembly memory, and this thread
 * and a helper thread each claim chunks until none is left. When the helper is busy or slow to wake (its core may be
 * running clients and I/O too), this thread simply runs more of them, and it waits at most for the one chunk the helper
 * is running. The process has one helper, started on first use.
 */
import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";
import {
  claimOf,
  claimWord,
  CONTROL_LENGTH,
  Field,
  type HelperStart,
  KERNEL_NAMES,
  type KernelName,
  MAX_ARGS,
  MAX_CHUNKS,
  type MemoryMessage,
  PASS_NUMBERS,
} from "./helper_protocol.ts";
import type { ScanKernels } from "./scan_kernels.ts";

/** How long this thread polls for the helper's last chunk of a pass before it sleeps until it is done. */
const POLL_MS = 0.05;

/** The process's helper thread; null where none can run (one core, or no thread could start). */
let processHelper: HelperThread | null | undefined;

/** Where each chunk of a pass starts, and the kernel's result for it. */
export interface ChunkResults {
  starts: number[];
  results: number[];
}

/** The kernels over one shared memory, with each large pass shared between this thread and the helper. */
export class ParallelKernels {
  readonly #memory: WebAssembly.Memory;
  readonly #kernels: ScanKernels;
  /** The memory's number with the helper, once it has been sent there. */
  #id: number | undefined;

  constructor(memory: WebAssembly.Memory, kernels: ScanKernels) {
    this.#memory = memory;
    this.#kernels = kernels;
  }

  /**
   * Runs `kernel` over `rows` rows in chunks of at least `chunkRows` (at most {@link MAX_CHUNKS} of them), with
   * `argsFor(from, to)` giving the arguments for rows [from, to), on this thread and the helper thread. Returns where
   * each chunk starts and its result; the chunks are the same whichever thread runs them.
   */
  inChunks(
    kernel: KernelName,
    rows: number,
    chunkRows: number,
    argsFor: (from: number, to: number) => number[],
  ): ChunkResults {
    const chunks = Math.max(1, Math.min(MAX_CHUNKS, Math.floor(rows / chunkRows)));
    const starts = Array.from({ length: chunks }, (_, chunk) => Math.floor(rows * chunk / chunks));
    const args = starts.map((from, chunk) => argsFor(from, starts[chunk + 1] ?? rows));
    // A chunk run on this thread; its result is 0 for a kernel without one.
    const runHere = (chunkArgs: number[]) =>
      (this.#kernels[kernel] as (...args: number[]) => number | undefined)(...chunkArgs) ?? 0;
    const helper = chunks > 1 ? HelperThread.process() : undefined;
    if (helper === undefined) return { starts, results: args.map(runHere) };
    this.#id ??= helper.share(this.#memory, this);
    return { starts, results: helper.runPass(this.#id, kernel, args, runHere) };
  }
}

/**
 * Starts the process's helper thread if it has not started (a server does so before its first search, which would
 * otherwise spend about 25 ms making it); resolves once it runs, or with false where none runs.
 */
export function scanHelperStarted(): Promise<boolean> {
  const helper = HelperThread.process();
  return helper === undefined ? Promise.resolve(false) : helper.started;
}

/** How many threads share a scan's passes: 2 with the helper thread, else 1. */
export function scanThreads(): number {
  return HelperThread.process() === undefined ? 1 : 2;
}

/** How many chunks the process's helper thread has run. For tests and benchmarks. */
export function scanHelperCalls(): number {
  return HelperThread.process()?.calls ?? 0;
}

class HelperThread {
  readonly #control = new Int32Array(new SharedArrayBuffer(CONTROL_LENGTH * 4));
  readonly #port: MessagePort;
  /**
   * Tells the helper to forget a memory whose owner was collected, and wakes it to read that now: it would otherwise
   * hold the memory (an evicted index's vectors) until its next pass or its next look at the port.
   */
  readonly #forget = new FinalizationRegistry<number>((id) => {
    this.#post({ id });
    Atomics.notify(this.#control, Field.CLAIM);
  });
  #nextId = 0;
  #pass = 0;
  readonly started: Promise<boolean>;

  constructor() {
    const worker = new Worker(new URL("./scan_helper_worker.ts", import.meta.url));
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    worker.postMessage({ control: this.#control, port: port2 } satisfies HelperStart, [port2]);
    // The helper never ends on its own: once started, it must not keep the process alive.
    this.started = new Promise((resolve) => {
      worker.once("message", () => {
        worker.unref();
        resolve(true);
      });
      worker.once("error", () => {
        processHelper = null;
        resolve(false);
      });
    });
    port1.unref();
  }

  /** The process's helper, started on first use; undefined where none runs. */
  static process(): HelperThread | undefined {
    if (processHelper === undefined) {
      try {
        processHelper = navigator.hardwareConcurrency > 1 ? new HelperThread() : null;
      } catch {
        processHelper = null;
      }
    }
    return processHelper ?? undefined;
  }

  /** Chunks the helper has run. */
  get calls(): number {
    return Atomics.load(this.#control, Field.CALLS);
  }

  /** Sends `memory` to the helper under a new number, which it forgets once `owner` is collected. */
  share(memory: WebAssembly.Memory, owner: object): number {
    const id = this.#nextId++;
    this.#post({ id, memory });
    this.#forget.register(owner, id);
    return id;
  }

  /**
   * Posts a pass of `kernel` over memory `id` with one chunk per entry of `args`, claims and runs chunks with `run`
   * until none is left, waits for those the helper claimed, and returns each chunk's result.
   */
  runPass(id: number, kernel: KernelName, args: number[][], run: (args: number[]) => number): number[] {
    const control = this.#control;
    control[Field.MEMORY] = id;
    control[Field.KERNEL] = KERNEL_NAMES.indexOf(kernel);
    args.forEach((chunkArgs, chunk) => control.set(chunkArgs, Field.ARGS + chunk * MAX_ARGS));
    control[Field.DONE] = 0;
    control[Field.FAILED] = 0;
    this.#pass = (this.#pass + 1) % PASS_NUMBERS;
    Atomics.store(control, Field.CLAIM, claimWord(this.#pass, args.length, 0));
    Atomics.notify(control, Field.CLAIM);
    const results: number[] = [];
    for (let chunk; (chunk = claimOf(Atomics.add(control, Field.CLAIM, 1)).next) < args.length;) {
      results[chunk] = run(args[chunk]!);
      Atomics.add(control, Field.DONE, 1);
    }
    // The helper's last chunk is usually done within microseconds: polled for a while, since a sleep's wake-up costs more.
    const pollUntil = performance.now() + POLL_MS;
    for (let done; (done = Atomics.load(control, Field.DONE)) < args.length;) {
      if (performance.now() > pollUntil) Atomics.wait(control, Field.DONE, done);
    }
    const failed = control[Field.FAILED]!;
    args.forEach((chunkArgs, chunk) => {
      if (results[chunk] !== undefined) return;
      results[chunk] = (failed & (1 << chunk)) === 0 ? control[Field.RESULTS + chunk]! : run(chunkArgs);
    });
    return results;
  }

  #post(message: MemoryMessage): void {
    this.#port.postMessage(message);
  }
}
