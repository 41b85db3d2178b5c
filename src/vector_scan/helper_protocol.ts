/**
 * How this thread shares a kernel pass with the scan helper thread (see scan_helper.ts): a small shared array of int32
 * holds one pass at a time, cut into chunks that either thread claims, and a port carries the memories the passes run
 * over.
 */
import type { MessagePort } from "node:worker_threads";

/** The kernels a helper runs, by their number in the control array. */
export const KERNEL_NAMES = ["dots", "dotsAt", "weighted", "within", "halfDotsAt"] as const;

/** A kernel of {@link ScanKernels} that the helper runs. */
export type KernelName = typeof KERNEL_NAMES[number];

/** Chunks a pass is cut into at most, and the arguments a chunk carries at most. */
export const MAX_CHUNKS = 8;
export const MAX_ARGS = 6;

/**
 * Where each field lies in the control array:
 * - `CLAIM`: one word for the pass's number, its chunk count and the next chunk to claim (see {@link claimWord}); this
 *   thread posts a pass by setting it last, and a thread claims a chunk by adding 1 to it (the helper by
 *   compare-and-swap, so that it never claims a chunk of a pass whose fields it did not read);
 * - `DONE`: chunks run, by either thread; `FAILED`: a bit per chunk the helper could not run (a trap);
 * - `CALLS`: chunks the helper has run, ever;
 * - the pass's memory and kernel, then each chunk's result, then each chunk's arguments.
 */
export const Field = {
  CLAIM: 0,
  DONE: 1,
  FAILED: 2,
  CALLS: 3,
  MEMORY: 4,
  KERNEL: 5,
  RESULTS: 6,
  ARGS: 6 + MAX_CHUNKS,
} as const;

/** The control array's length. */
export const CONTROL_LENGTH = Field.ARGS + MAX_CHUNKS * MAX_ARGS;

/** Passes are numbered modulo this, so that a claim word stays a positive int32. */
export const PASS_NUMBERS = 2 ** 23;

/**
 * The claim word of pass `pass` of `chunks` chunks, with `next` the next chunk to claim. Chunk counts and claims take
 * 4 bits each: a pass has at most 8 chunks, and this thread's last claim may pass the count by one.
 */
export function claimWord(pass: number, chunks: number, next: number): number {
  return pass * 256 + chunks * 16 + next;
}

/** The chunk count and the next chunk of a claim word. */
export function claimOf(word: number): { chunks: number; next: number } {
  return { chunks: (word >> 4) & 15, next: word & 15 };
}

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
