/**
 * The C allocator under the runtime and native code, asked to hand its free pages back to the system. glibc keeps the
 * pages that freed native buffers leave (request bodies, store values, a snapshot's chunks) for reuse, and returns only
 * those at the top of its heap: after a bulk load over HTTP, much of the server's RSS can be such free pages.
 * `malloc_trim` returns them all.
 */

const SYMBOLS = {
  // Runs on a thread of its own: it walks the whole heap.
  malloc_trim: { parameters: ["usize"], result: "i32", nonblocking: true },
} as const;

/** glibc's allocator, where the process runs on it and may load native code (`--allow-ffi`). */
export class NativeAllocator {
  readonly #library: Deno.DynamicLibrary<typeof SYMBOLS>;
  #closed = false;

  private constructor(library: Deno.DynamicLibrary<typeof SYMBOLS>) {
    this.#library = library;
  }

  /** Opens glibc's allocator, or gives undefined where there is none to open (another OS or C library, no FFI). */
  static open(): NativeAllocator | undefined {
    if (Deno.build.os !== "linux" || typeof Deno.dlopen !== "function") return undefined;
    if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") return undefined;
    try {
      return new NativeAllocator(Deno.dlopen("libc.so.6", SYMBOLS));
    } catch {
      // No `libc.so.6`, or no `malloc_trim` in it (another C library): the process runs on without trimming.
      return undefined;
    }
  }

  /** Hands the allocator's free pages back to the system; does nothing once closed. */
  async trim(): Promise<void> {
    if (!this.#closed) await this.#library.symbols.malloc_trim(0n);
  }

  close(): void {
    this.#closed = true;
    this.#library.close();
  }
}
