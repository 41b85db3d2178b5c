/** Runs `main.ts` as a real server process, for tests and benchmarks that restart, kill or measure it. */
import assert from "node:assert/strict";
import { temporaryDir, testModels } from "./_helpers.ts";

/** The permissions of `deno task start`. */
export const PERMISSIONS = [
  "--allow-net",
  "--allow-env",
  "--allow-read",
  "--allow-write",
  "--allow-ffi",
  "--allow-sys",
  "--allow-run",
  "--v8-flags=--expose-gc,--max-semi-space-size=4",
];
const MAIN = new URL("../main.ts", import.meta.url).pathname;

/** A running server process. */
export interface ServerProcess {
  url: string;
  /** The key of the `default` project: printed at first start, or passed in. */
  key: string;
  pid: number;
  /** Sends `body` to `POST /manage` as the `default` project. */
  call(body: Record<string, unknown>): Promise<Response>;
  /** Stops the process with `signal` and returns its exit code. */
  stop(signal?: Deno.Signal): Promise<number>;
  /** For `await using`: stops the process with SIGTERM unless it was stopped or has exited; again, it does nothing. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** Calls `server`, asserts a 200 and returns the parsed body. */
export async function ok<T = unknown>(server: ServerProcess, body: Record<string, unknown>): Promise<T> {
  const response = await server.call(body);
  const json = await response.json();
  assert.equal(response.status, 200, `${body.action} failed: ${JSON.stringify(json)}`);
  return json as T;
}

/** The text of a quire server's `/metrics`. */
export async function metricsText(server: { url: string }): Promise<string> {
  return await (await fetch(server.url.replace("/manage", "/metrics"))).text();
}

/** The value of the metric `name` (with its labels as written there, e.g. `quire_heap_bytes{kind="used"}`) in `text`. */
export function metricIn(text: string, name: string): number {
  const escaped = name.replace(/[{}"]/g, "\\$&");
  return Number(text.match(new RegExp(`^${escaped} (\\d+)`, "m"))?.[1] ?? NaN);
}

/** Waits until `server` is ready (`/readyz`): its store answers and it has loaded its default model, warmed at start. */
export async function waitUntilReady(server: ServerProcess): Promise<void> {
  const url = server.url.replace("/manage", "/readyz");
  for (;;) {
    const response = await fetch(url);
    await response.body?.cancel();
    if (response.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** An environment for a server over a fresh temporary store, with the generated test models unless given others. */
export async function serverEnvironment(modelsFile?: string): Promise<Record<string, string>> {
  const dir = await temporaryDir("quire-main-");
  if (modelsFile === undefined) {
    modelsFile = `${dir}/models.json`;
    await Deno.writeTextFile(modelsFile, JSON.stringify(await testModels()));
  }
  return {
    HOSTNAME: "127.0.0.1",
    PORT: "0",
    DENO_KV_PATH: `${dir}/data/quire.kv`,
    MODELS_FILE: modelsFile,
    ALLOW_REMOTE_MODELS: "false",
  };
}

/** Options of {@link startServerProcess}. */
export interface ServerProcessOptions {
  /** The `deno` arguments; `run` with {@link PERMISSIONS} and `main.ts` by default. */
  args?: string[];
  /** Hears everything the process writes to stdout, piece by piece; otherwise it is read and dropped. */
  onStdout?: (text: string) => void;
}

/** Starts `main.ts` with `env` and waits until it listens. */
export async function startServerProcess(
  env: Record<string, string>,
  key = "",
  options: ServerProcessOptions = {},
): Promise<ServerProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: options.args ?? ["run", ...PERMISSIONS, MAIN],
    env,
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  let output = "";
  while (!/listening on (\S+)/.test(output)) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`The server exited before listening: ${output}`);
    const text = decoder.decode(value, { stream: true });
    output += text;
    options.onStdout?.(text);
  }
  // Keep draining stdout (request log lines), so that the process never blocks on a full pipe; decoded only when
  // someone listens, since a benchmark makes megabytes of them.
  const drained = (async () => {
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      if (options.onStdout !== undefined) options.onStdout(decoder.decode(read.value, { stream: true }));
    }
  })();
  const url = output.match(/listening on (\S+)/)![1]!;
  const printedKey = output.match(/key is shown only now: (\S+)/)?.[1];
  const projectKey = printedKey ?? key;
  let exited = false;
  child.status.then(() => exited = true);
  let stopping: Promise<number> | undefined;
  const stop = (signal: Deno.Signal = "SIGTERM") => {
    const stopped = (async () => {
      child.kill(signal);
      const { code } = await child.status;
      await drained;
      return code;
    })();
    stopping ??= stopped;
    return stopped;
  };
  return {
    url,
    key: projectKey,
    pid: child.pid,
    call: (body) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "x-service-version": "v1", "x-project-key": projectKey },
        body: JSON.stringify({ projectId: "default", ...body }),
      }),
    stop,
    async [Symbol.asyncDispose]() {
      if (stopping === undefined && !exited) await stop();
      else await Promise.allSettled([stopping, child.status, drained]);
    },
  };
}
