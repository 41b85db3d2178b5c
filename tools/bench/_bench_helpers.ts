/** What the benchmarks share: the fast model's registry, calls that must succeed, timing, RSS, and result lines. */
import { FAST_384_SHAPE, writeBertModel } from "../tiny_bert.ts";

/** A registry of the fast one-layer 384-d model, written into `dir` with its `models.json`. */
export async function writeFastModelRegistry(
  dir: string,
): Promise<{ "svc-minilm": { source: string; version: string; dtype: "fp32" } }> {
  await writeBertModel(`${dir}/fast`, FAST_384_SHAPE);
  const registry = { "svc-minilm": { source: `${dir}/fast`, version: "bench-384-1", dtype: "fp32" as const } };
  await Deno.writeTextFile(`${dir}/models.json`, JSON.stringify(registry));
  return registry;
}

/** Prints one result line: the target, then the figures. */
export function line(target: string, text: string): void {
  console.log(`${target.padEnd(22)} ${text}`);
}

/** Calls the server and returns the parsed answer; throws on anything but a 200. */
export { ok } from "../../tests/_server_process.ts";

/** How long `work` took, in milliseconds. */
export async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

/** A process's resident memory in MiB: all of it, its anonymous part, and its peak while something runs. */
export { anonymousMiB, peakRssDuring, rssMiB } from "../../tests/_process_memory.ts";

/** Cores kept busy while `work` ran: by every process on the machine, and by this one (the benchmark's clients). */
export interface CoresBusy {
  machine: number;
  client: number;
}

/** Runs `work` and measures the cores it kept busy, from `/proc/stat` and this process's `/proc/self/stat`. */
export async function coresBusyDuring(work: () => Promise<unknown>): Promise<CoresBusy> {
  const before = await cpuTicks();
  const start = performance.now();
  await work();
  const seconds = (performance.now() - start) / 1000;
  const after = await cpuTicks();
  // Linux counts CPU time in clock ticks of 1/100 s (USER_HZ) on every common build.
  const cores = (ticks: number) => ticks / 100 / seconds;
  return { machine: cores(after.busy - before.busy), client: cores(after.self - before.self) };
}

async function cpuTicks(): Promise<{ busy: number; self: number }> {
  const total = (await Deno.readTextFile("/proc/stat")).split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: everything but idle and iowait is busy.
  const busy = total.slice(0, 8).reduce((sum, ticks, i) => i === 3 || i === 4 ? sum : sum + ticks, 0);
  const stat = await Deno.readTextFile("/proc/self/stat");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command name.
  return { busy, self: Number(fields[11]) + Number(fields[12]) };
}
