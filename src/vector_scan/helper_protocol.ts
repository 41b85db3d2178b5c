/**
 * How this thread hands a kernel call to the scan helper thread (see scan_helper.ts): a small shared array of int32
 * holds one call at a time, its state and its result, and a port carries the memories the calls run over.
 */
import type { MessagePort } from "node:worker_threads";

/** The kernels a helper runs, by their number in the control array. */
export const KERNEL_NAMES = ["dots", "dotsAt", "hamming", "within", "floatDotsAt"] as const;

/** A kernel of {@link ScanKernels} that the helper runs. */
export type KernelName = typeof KERNEL_NAMES[number];

/** Where each field lies in the control array; a call's arguments start at `ARGS`. */
export const Field = { STATE: 0, MEMORY: 1, KERNEL: 2, RESULT: 3, ARGS: 4 } as const;

/** Arguments a call carries at most, and the control array's length. */
export const MAX_ARGS = 6;
export const CONTROL_LENGTH = Field.ARGS + MAX_ARGS;

/**
 * A call's states. This thread posts it; the helper takes it to running unless this thread took it back first (it was
 * done waiting), and leaves it done or failed (a trap), which this thread then runs itself. Idle again once read.
 */
export const State = { IDLE: 0, POSTED: 1, RUNNING: 2, DONE: 3, FAILED: 4 } as const;

/** The helper's first message: the control array, and the port that will carry memories. */
export interface HelperStart {
  control: Int32Array;
  port: MessagePort;
}

/** A memory to run calls over under `id`, or, without `memory`, the number of one to forget. */
export interface MemoryMessage {
  id: number;
  memory?: WebAssembly.Memory;
}
