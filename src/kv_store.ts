/** Opens Deno KV at a file path or a KV Connect URL. */
import { dirname } from "node:path";

/** Opens the store; a file path gets its directory created first. */
export async function openKvStore(path: string): Promise<Deno.Kv> {
  if (path !== ":memory:" && !/^https?:\/\//.test(path)) {
    await Deno.mkdir(dirname(path), { recursive: true });
  }
  return await Deno.openKv(path);
}
