/** A process's resident memory: read once, or its peak while something runs. */
import { metricIn, metricsText } from "./_server_process.ts";

/** The resident memory (RSS) of process `pid`, in MiB, from `/proc` (which takes `--allow-all`). */
export function rssMiB(pid: number): Promise<number> {
  return statusMiB(pid, "VmRSS");
}

/** The anonymous part of process `pid`'s resident memory (`RssAnon`: not file pages), in MiB, from `/proc`. */
export function anonymousMiB(pid: number): Promise<number> {
  return statusMiB(pid, "RssAnon");
}

/** A figure of `/proc/<pid>/status` (given there in kB), in MiB. */
async function statusMiB(pid: number, field: "VmRSS" | "RssAnon"): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(status.match(new RegExp(`${field}:\\s+(\\d+)`))![1]) / 1024;
}

/** A quire server's resident memory in MiB, as its `/metrics` reports it (no `/proc` access needed). */
export async function serverRssMiB(server: { url: string }): Promise<number> {
  return metricIn(await metricsText(server), "quire_process_resident_memory_bytes") / 1024 / 1024;
}

/** The highest of `read()` (an RSS in MiB) while `work` runs, read every `everyMs`; and what `work` returned. */
export async function peakRssDuring<T>(
  read: () => Promise<number>,
  work: () => Promise<T>,
  everyMs = 10,
): Promise<[number, T]> {
  let peak = await read();
  let running = true;
  const sampler = (async () => {
    while (running) {
      peak = Math.max(peak, await read());
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  try {
    const result = await work();
    return [Math.max(peak, await read()), result];
  } finally {
    running = false;
    await sampler;
  }
}
