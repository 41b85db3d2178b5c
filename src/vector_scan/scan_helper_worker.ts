/**
 * The scan helper thread: it waits on the control array for kernel passes over shared memories, claims their chunks
 * while any are left, and writes each chunk's result (see helper_protocol.ts). It blocks rather than using an event
 * loop, so that it joins a pass within microseconds; memories arrive on a port that it reads whenever it wakes, and at
 * least once a second.
 */
import { type MessagePort, parentPort, receiveMessageOnPort } from "node:worker_threads";
import { claimOf, Field, type HelperStart, KERNEL_NAMES, MAX_ARGS, type MemoryMessage } from "./helper_protocol.ts";
import { type ScanKernels, scanKernels } from "./scan_kernels.ts";

/** How long the helper sleeps at most before it reads its port again. */
const PORT_READ_MS = 1_000;
/**
 * How long the helper keeps polling for the next pass after its last chunk before it sleeps. A search runs several
 * passes in quick succession, and waking a sleeping thread for each would cost about as much as the chunk it runs.
 */
const POLL_MS = 0.2;

parentPort!.once("message", ({ control, port }: HelperStart) => {
  parentPort!.postMessage("ready");
  serve(control, port);
});

function serve(control: Int32Array, port: MessagePort): never {
  const kernels = new Map<number, ScanKernels>();
  let lastChunk = -Infinity;
  for (;;) {
    let forgotten = false;
    for (let received; (received = receiveMessageOnPort(port)) !== undefined;) {
      const { id, memory } = received.message as MemoryMessage;
      if (memory === undefined) forgotten = kernels.delete(id) || forgotten;
      else kernels.set(id, scanKernels(memory));
    }
    // This thread allocates almost nothing, so its heap would not be collected for a long time, and a shared memory is
    // freed only once every thread that holds it lets it go: an evicted index's vectors would stay.
    if (forgotten) (globalThis as { gc?: () => void }).gc?.();
    const claim = Atomics.load(control, Field.CLAIM);
    const { chunks, next: chunk } = claimOf(claim);
    if (chunk >= chunks) {
      if (performance.now() - lastChunk >= POLL_MS) Atomics.wait(control, Field.CLAIM, claim, PORT_READ_MS);
      continue;
    }
    const ran = runChunk(control, kernels, claim, chunk);
    if (ran === "unknown memory") {
      // A pass over a memory not yet read from the port is left to its poster; its port is read again in a moment.
      Atomics.wait(control, Field.CLAIM, claim, 1);
      continue;
    }
    if (ran === "claimed elsewhere") continue;
    lastChunk = performance.now();
  }
}

/**
 * Claims chunk `chunk` of the pass posted in `control` and runs it. A function of its own, so that the kernels it
 * used (and their memory) are no longer on the serving loop's stack once it returns: the loop would otherwise hold the
 * last memory it scanned, an evicted index's vectors, for as long as no other pass came.
 */
function runChunk(
  control: Int32Array,
  kernels: Map<number, ScanKernels>,
  claim: number,
  chunk: number,
): "ran" | "unknown memory" | "claimed elsewhere" {
  // Read before the claim: a pass's fields are not written again until all its chunks are claimed, and the claim
  // fails if they were.
  const own = kernels.get(control[Field.MEMORY]!);
  if (own === undefined) return "unknown memory";
  const kernel = own[KERNEL_NAMES[control[Field.KERNEL]!]!] as (...args: number[]) => number | undefined;
  const args = Array.from(control.subarray(Field.ARGS + chunk * MAX_ARGS, Field.ARGS + (chunk + 1) * MAX_ARGS));
  if (Atomics.compareExchange(control, Field.CLAIM, claim, claim + 1) !== claim) return "claimed elsewhere";
  try {
    control[Field.RESULTS + chunk] = kernel(...args) ?? 0;
    Atomics.add(control, Field.CALLS, 1);
  } catch {
    Atomics.or(control, Field.FAILED, 1 << chunk);
  }
  Atomics.add(control, Field.DONE, 1);
  Atomics.notify(control, Field.DONE);
  return "ran";
}
