/** Reads and writes of whole byte runs on an open file, which a single `readSync` or `writeSync` may cut short. */

/** Reads `into` whole from the file's position; false when the file ends first. */
export function readWhole(file: Deno.FsFile, into: Uint8Array): boolean {
  for (let at = 0; at < into.byteLength;) {
    const read = file.readSync(into.subarray(at));
    if (read === null || read === 0) return false;
    at += read;
  }
  return true;
}

/** Writes `bytes` whole at the file's position. */
export function writeWhole(file: Deno.FsFile, bytes: Uint8Array): void {
  for (let at = 0; at < bytes.byteLength;) at += file.writeSync(bytes.subarray(at));
}
