/** What the benchmarks share: the fast model's registry, calls that must succeed, timing, RSS, and result lines. */
import { FAST_384_SHAPE, writeBertModel } from "../_model.ts";
import type { ServerProcess } from "../_server_process.ts";

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

/** Calls the server and returns the parsed answer; throws on anything but a success. */
export async function ok<T = unknown>(server: ServerProcess, body: Record<string, unknown>): Promise<T> {
  const response = await server.call(body);
  const json = await response.json();
  if (!response.ok) throw new Error(`${body.action} failed with ${response.status}: ${JSON.stringify(json)}`);
  return json as T;
}

/** How long `work` took, in milliseconds. */
export async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

/** A process's resident memory in MiB. */
export async function rssMiB(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(status.match(/VmRSS:\s+(\d+)/)![1]) / 1024;
}
