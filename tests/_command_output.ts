/** Runs a command in a directory, without colours, and returns its exit code and decoded output. */

/** What a finished command printed. */
export interface CommandOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `command` (`Deno.execPath()` for Deno itself) with `args` in `cwd`, with `NO_COLOR` set. */
export async function commandOutput(command: string, args: string[], cwd: string): Promise<CommandOutput> {
  const { code, stdout, stderr } = await new Deno.Command(command, {
    args,
    cwd,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
}
