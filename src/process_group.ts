/**
 * `PROCESSES=N`: N server processes on one port (`reusePort`: the kernel spreads connections over them), each a full
 * instance over the same store. This process supervises them: it picks the port, forwards SIGINT and SIGTERM, and
 * restarts a process that dies.
 */

/** The variable that tells a started process its number; set by the group, never by an operator. */
export const PROCESS_NUMBER_VARIABLE = "QUIRE_PROCESS";

/** The permissions of `deno task start` (but starting processes), which every process of the group gets. */
const PERMISSIONS = ["--allow-net", "--allow-env", "--allow-read", "--allow-write", "--allow-ffi", "--allow-sys"];
/** The V8 flags of `deno task start` (see docs/operations.md), which every process of the group gets too. */
const V8_FLAGS = "--v8-flags=--expose-gc,--max-semi-space-size=4";

/** How long after a process died it is started again. */
const RESTART_DELAY_MS = 1_000;

/** What the group needs to start its processes. */
export interface ProcessGroupOptions {
  count: number;
  hostname: string;
  /** 0 picks a free port once, for all of them. */
  port: number;
}

/** Starts the processes and supervises them until SIGINT or SIGTERM; resolves with the exit code once all stopped. */
export async function runProcessGroup(options: ProcessGroupOptions): Promise<number> {
  const port = options.port === 0 ? freePort(options.hostname) : options.port;
  let stopping = false;
  const running = new Map<number, Deno.ChildProcess>();
  const start = (number: number) => {
    const child = new Deno.Command(Deno.execPath(), {
      args: processArgs(),
      env: { PORT: String(port), [PROCESS_NUMBER_VARIABLE]: String(number) },
    }).spawn();
    running.set(number, child);
    child.status.then(({ code, signal }) => {
      running.delete(number);
      if (stopping) return;
      console.error(`Process ${number} (pid ${child.pid}) ended (${signal ?? `code ${code}`}); starting it again`);
      setTimeout(() => stopping || start(number), RESTART_DELAY_MS);
    });
  };
  const { promise: stopped, resolve } = Promise.withResolvers<void>();
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    Deno.addSignalListener(signal, () => {
      stopping = true;
      for (const child of running.values()) child.kill(signal);
      resolve();
    });
  }
  for (let number = 1; number <= options.count; number++) start(number);
  await stopped;
  const codes = await Promise.all([...running.values()].map(async (child) => (await child.status).code));
  return codes.every((code) => code === 0) ? 0 : 1;
}

/** The arguments that start this same program as one process of the group. */
function processArgs(): string[] {
  // A compiled binary carries its program and permissions; `deno run` needs them named.
  if (Deno.build.standalone) return [];
  const config = new URL("../deno.json", import.meta.url).pathname;
  return ["run", ...PERMISSIONS, V8_FLAGS, "--config", config, Deno.mainModule];
}

/** A port that is free now, to hand to every process. */
function freePort(hostname: string): number {
  const listener = Deno.listen({ hostname, port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}
