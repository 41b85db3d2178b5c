/**
 * The scan helper thread: it waits on the control array for kernel calls over shared memories, runs each, and writes
 * its result (see helper_protocol.ts). It blocks rather than using an event loop, so that a call starts within
 * microseconds; memories arrive on a port that it reads whenever it wakes, and at least once a second.
 */
import { type MessagePort, parentPort, receiveMessageOnPort } from "node:worker_threads";
import { Field, type HelperStart, KERNEL_NAMES, MAX_ARGS, type MemoryMessage, State } from "./helper_protocol.ts";
import { type ScanKernels, scanKernels } from "./scan_kernels.ts";

/** How long the helper sleeps at most before it reads its port again. */
const PORT_READ_MS = 1_000;

parentPort!.once("message", ({ control, port }: HelperStart) => {
  parentPort!.postMessage("ready");
  serve(control, port);
});

function serve(control: Int32Array, port: MessagePort): never {
  const kernels = new Map<number, ScanKernels>();
  for (;;) {
    for (let received; (received = receiveMessageOnPort(port)) !== undefined;) {
      const { id, memory } = received.message as MemoryMessage;
      if (memory === undefined) kernels.delete(id);
      else kernels.set(id, scanKernels(memory));
    }
    const state = Atomics.load(control, Field.STATE);
    const own = kernels.get(control[Field.MEMORY]!);
    if (state !== State.POSTED || own === undefined) {
      // A call over a memory not yet read from the port is left to its poster, which takes it back when it is done.
      Atomics.wait(control, Field.STATE, state, state === State.POSTED ? 1 : PORT_READ_MS);
      continue;
    }
    if (Atomics.compareExchange(control, Field.STATE, State.POSTED, State.RUNNING) !== State.POSTED) continue;
    let outcome: number = State.DONE;
    try {
      const kernel = own[KERNEL_NAMES[control[Field.KERNEL]!]!] as (...args: number[]) => number | undefined;
      const args = Array.from(control.subarray(Field.ARGS, Field.ARGS + MAX_ARGS));
      control[Field.RESULT] = kernel(...args) ?? 0;
    } catch {
      outcome = State.FAILED;
    }
    Atomics.store(control, Field.STATE, outcome);
    Atomics.notify(control, Field.STATE);
  }
}
