/** One progress line for long CLI work, rewritten in place on a terminal, and nothing when stderr is piped. */

const encoder = new TextEncoder();

/** Shows `message` as the progress line on a terminal; nothing when stderr is piped. */
export function progress(message: string): void {
  if (Deno.stderr.isTerminal()) Deno.stderr.writeSync(encoder.encode(`\r\x1b[2K${message}`));
}

/** Clears the progress line on a terminal, so that what follows starts on a clean line. */
export function endProgress(): void {
  if (Deno.stderr.isTerminal()) Deno.stderr.writeSync(encoder.encode("\r\x1b[2K"));
}
