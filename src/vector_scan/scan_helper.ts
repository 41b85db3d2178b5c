/**
 * A second thread for the scan kernels. Searches run on the main thread, and on this 2-core box the second core sat
 * idle during them; a scan now gives half of each kernel pass to a helper thread over the same shared WebAssembly
 * memory, and runs the other half itself. The process has one helper, started on first use; a call it has not begun by
 * the time this thread's half is done (it is busy or still starting) runs here, so a search never waits on a helper
 * that has not begun.
 */
import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";
import {
  CONTROL_LENGTH,
  Field,
  type HelperStart,
  KERNEL_NAMES,
  type KernelName,
  type MemoryMessage,
  State,
} from "./helper_protocol.ts";
import type { ScanKernels } from "./scan_kernels.ts";

/** The process's helper thread; null where none can run (one core, or no thread could start). */
let processHelper: HelperThread | null | undefined;

/** The kernels over one shared memory, with each call split between this thread and the helper. */
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
   * Runs `kernel` with `args` on the helper thread while `here` runs on this one, and returns the kernel's result (0 for
   * a kernel without one). Without a helper, or when it has not begun the call by the time `here` returns, this thread
   * runs the call after `here`.
   */
  alongside(kernel: KernelName, args: number[], here: () => void): number {
    const helper = HelperThread.process();
    if (helper === undefined) {
      here();
      return this.run(kernel, args);
    }
    this.#id ??= helper.share(this.#memory, this);
    return helper.alongside(this.#id, kernel, args, here) ?? this.run(kernel, args);
  }

  /**
   * Runs `kernel` over `rows` rows in two halves, the second on the helper thread, with `argsFor(from, to)` giving the
   * arguments for rows [from, to); fewer than `least` rows run here, whole. Returns where the second half starts and
   * each half's result.
   */
  inHalves(
    kernel: KernelName,
    rows: number,
    least: number,
    argsFor: (from: number, to: number) => number[],
  ): [number, number, number] {
    if (rows < least) return [rows, this.run(kernel, argsFor(0, rows)), 0];
    const half = rows >> 1;
    let first = 0;
    const second = this.alongside(kernel, argsFor(half, rows), () => first = this.run(kernel, argsFor(0, half)));
    return [half, first, second];
  }

  /** Runs `kernel` with `args` on this thread; returns its result (0 for a kernel without one). */
  run(kernel: KernelName, args: number[]): number {
    return (this.#kernels[kernel] as (...args: number[]) => number | undefined)(...args) ?? 0;
  }
}

/** Resolves once the process's helper thread has started; false where none runs. For tests and benchmarks. */
export function scanHelperStarted(): Promise<boolean> {
  const helper = HelperThread.process();
  return helper === undefined ? Promise.resolve(false) : helper.started;
}

/** How many calls the process's helper thread has run. For tests and benchmarks. */
export function scanHelperCalls(): number {
  return HelperThread.process()?.calls ?? 0;
}

class HelperThread {
  readonly #control = new Int32Array(new SharedArrayBuffer(CONTROL_LENGTH * 4));
  readonly #port: MessagePort;
  readonly #forget = new FinalizationRegistry<number>((id) => this.#post({ id }));
  #nextId = 0;
  #calls = 0;
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

  get calls(): number {
    return this.#calls;
  }

  /** Sends `memory` to the helper under a new number, which it forgets once `owner` is collected. */
  share(memory: WebAssembly.Memory, owner: object): number {
    const id = this.#nextId++;
    this.#post({ id, memory });
    this.#forget.register(owner, id);
    return id;
  }

  /** The helper's result of the call, or undefined when it did not run it (or it failed) and this thread must. */
  alongside(id: number, kernel: KernelName, args: number[], here: () => void): number | undefined {
    const control = this.#control;
    control[Field.MEMORY] = id;
    control[Field.KERNEL] = KERNEL_NAMES.indexOf(kernel);
    control.set(args, Field.ARGS);
    Atomics.store(control, Field.STATE, State.POSTED);
    Atomics.notify(control, Field.STATE);
    here();
    if (Atomics.compareExchange(control, Field.STATE, State.POSTED, State.IDLE) === State.POSTED) return undefined;
    let state: number;
    while ((state = Atomics.load(control, Field.STATE)) === State.RUNNING) {
      Atomics.wait(control, Field.STATE, State.RUNNING);
    }
    Atomics.store(control, Field.STATE, State.IDLE);
    if (state !== State.DONE) return undefined;
    this.#calls++;
    return control[Field.RESULT]!;
  }

  #post(message: MemoryMessage): void {
    this.#port.postMessage(message);
  }
}
