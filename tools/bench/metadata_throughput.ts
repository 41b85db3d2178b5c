/**
 * Target 5: requests per second of `getIndex` against a bare `Deno.serve` JSON echo, measured with wrk (32
 * connections, 2 threads) in the same run. wrk comes from Debian: `apt-get install wrk`.
 */
import type { ServerProcess } from "../../tests/_server_process.ts";

const DURATION = "8s";

/** Returns the figure line. */
export async function measureMetadataThroughput(server: ServerProcess, target: { indexName: string }): Promise<string> {
  if (!await hasWrk()) return "skipped: wrk is not installed (apt-get install wrk)";
  const dir = await Deno.makeTempDir({ prefix: "quire-wrk-" });
  const body = JSON.stringify({ action: "getIndex", projectId: "default", indexName: target.indexName });
  const script = `${dir}/post.lua`;
  await Deno.writeTextFile(
    script,
    `wrk.method = "POST"\nwrk.body = ${JSON.stringify(body)}\n` +
      `wrk.headers["content-type"] = "application/json"\nwrk.headers["x-service-version"] = "v1"\n` +
      `wrk.headers["x-project-key"] = "${server.key}"\n`,
  );
  const echo = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", new URL("./echo_server.ts", import.meta.url).pathname],
    stdout: "piped",
  }).spawn();
  const reader = echo.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let output = "";
  while (!/listening (\d+)/.test(output)) output += (await reader.read()).value ?? "";
  const echoUrl = `http://127.0.0.1:${output.match(/listening (\d+)/)![1]}/`;
  try {
    await wrk(echoUrl, script, "2s");
    const echoRps = await wrk(echoUrl, script, DURATION);
    await wrk(server.url, script, "2s");
    const ours = await wrk(server.url, script, DURATION);
    return `${ours.toFixed(0)} req/s; bare Deno.serve echo ${echoRps.toFixed(0)} req/s: ` +
      `${(ours / echoRps * 100).toFixed(0)}% (target ≥ 40%)`;
  } finally {
    echo.kill();
    await echo.status;
    await reader.cancel();
    await Deno.remove(dir, { recursive: true });
  }
}

async function hasWrk(): Promise<boolean> {
  try {
    await new Deno.Command("wrk", { args: ["--version"], stdout: "null", stderr: "null" }).output();
    return true;
  } catch {
    return false;
  }
}

async function wrk(url: string, script: string, duration: string): Promise<number> {
  const { stdout } = await new Deno.Command("wrk", {
    args: ["-t2", "-c32", `-d${duration}`, "-s", script, url],
    stdout: "piped",
  }).output();
  const text = new TextDecoder().decode(stdout);
  const rps = text.match(/Requests\/sec:\s+([\d.]+)/);
  if (rps === null) throw new Error(`Unexpected wrk output: ${text}`);
  const non2xx = text.match(/Non-2xx or 3xx responses: (\d+)/);
  if (non2xx !== null) throw new Error(`wrk saw ${non2xx[1]} failed responses at ${url}`);
  return Number(rps[1]);
}
