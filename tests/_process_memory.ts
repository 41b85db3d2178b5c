/** A process's resident memory, read from `/proc`: once, or its peak while something runs. */

/** The resident memory (RSS) of process `pid`, in MiB. */
export async function rssMiB(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(status.match(/VmRSS:\s+(\d+)/)![1]) / 1024;
}

/** The highest RSS of process `pid` while `work` runs, read every `everyMs`, in MiB; and what `work` returned. */
export async function peakRssDuring<T>(pid: number, work: () => Promise<T>, everyMs = 10): Promise<[number, T]> {
  let peak = await rssMiB(pid);
  let running = true;
  const sampler = (async () => {
    while (running) {
      peak = Math.max(peak, await rssMiB(pid));
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  try {
    const result = await work();
    return [Math.max(peak, await rssMiB(pid)), result];
  } finally {
    running = false;
    await sampler;
  }
}
