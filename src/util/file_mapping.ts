/**
 * Files mapped into shared WebAssembly memory through libc's `mmap`: a mapped range reads the file's pages from the
 * page cache as they are touched, counts as file pages rather than anonymous memory, and shares its pages with every
 * process on the host that maps the same file. The mapping is private: a write to a mapped page copies that page for
 * this process and never reaches the file, so the memory stays writable as before. A shared memory never moves as it
 * grows, so a mapping inside it holds for the memory's life, and goes with it.
 *
 * Only on Linux, with `--allow-ffi`, and after a self-test has mapped a file and read it back: elsewhere (Deno Deploy,
 * the wasm backend, another OS) callers copy the bytes instead.
 */

const SYMBOLS = {
  open: { parameters: ["buffer", "i32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  mmap: { parameters: ["pointer", "usize", "i32", "i32", "i32", "i64"], result: "pointer" },
} as const;

/** Mapped ranges start and end on a WebAssembly page: a multiple of every page size Linux runs with. */
export const MAPPING_ALIGN = 65_536;

/** `bytes` rounded up to whole {@link MAPPING_ALIGN} pages. */
export function paddedToPages(bytes: number): number {
  return Math.ceil(bytes / MAPPING_ALIGN) * MAPPING_ALIGN;
}

// The same on x86-64 and AArch64 Linux.
const O_RDONLY_CLOEXEC = 0o2000000;
const PROT_READ_WRITE = 0x1 | 0x2;
const MAP_PRIVATE = 0x02;
const MAP_FIXED = 0x10;
const MAP_ANONYMOUS = 0x20;

/** The process's mapper: undefined before the first call, null where mapping is not possible. */
let opened: FileMapper | null | undefined;

/** Maps files into shared WebAssembly memories. */
export class FileMapper {
  readonly #library: Deno.DynamicLibrary<typeof SYMBOLS>;

  private constructor(library: Deno.DynamicLibrary<typeof SYMBOLS>) {
    this.#library = library;
  }

  /**
   * This process's mapper, opened and self-tested on the first call; undefined where files cannot be mapped, or where
   * a mapping did not read back what the file holds.
   */
  static get(): FileMapper | undefined {
    if (opened === undefined) opened = FileMapper.#open() ?? null;
    return opened ?? undefined;
  }

  static #open(): FileMapper | undefined {
    if (Deno.build.os !== "linux" || typeof Deno.dlopen !== "function") return undefined;
    if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") return undefined;
    let mapper: FileMapper;
    try {
      mapper = new FileMapper(Deno.dlopen("libc.so.6", SYMBOLS));
    } catch {
      return undefined;
    }
    if (mapper.#selfTest()) return mapper;
    console.warn("Copying segment files into memory: mapping one did not read back what it holds");
    return undefined;
  }

  /**
   * Maps `length` bytes of the file at `path` from `offset` on over the bytes of `memory` from `at` on, replacing what
   * they held; all three on {@link MAPPING_ALIGN}, and within the memory and the file. False, with the range zeroed,
   * when it cannot: then the caller copies the bytes in.
   */
  mapInto(memory: WebAssembly.Memory, at: number, path: string, offset: number, length: number): boolean {
    const aligned = [at, offset, length].every((value) => value % MAPPING_ALIGN === 0);
    if (!aligned || length === 0 || at + length > memory.buffer.byteLength) return false;
    try {
      if (Deno.statSync(path).size < offset + length) return false;
    } catch {
      return false;
    }
    const base = Deno.UnsafePointer.value(Deno.UnsafePointer.of(new Uint8Array(memory.buffer)));
    if (BigInt(base) % BigInt(MAPPING_ALIGN) !== 0n) return false;
    const address = Deno.UnsafePointer.create(BigInt(base) + BigInt(at));
    const { symbols } = this.#library;
    const file = symbols.open(new TextEncoder().encode(`${path}\0`), O_RDONLY_CLOEXEC);
    if (file < 0) return false;
    try {
      const mapped = symbols.mmap(
        address,
        BigInt(length),
        PROT_READ_WRITE,
        MAP_PRIVATE | MAP_FIXED,
        file,
        BigInt(offset),
      );
      if (Deno.UnsafePointer.equals(mapped, address)) return true;
      // A fixed mapping that fails may have unmapped the range already: it is mapped again as the zeros it held.
      symbols.mmap(address, BigInt(length), PROT_READ_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1, 0n);
      return false;
    } finally {
      symbols.close(file);
    }
  }

  /** Maps a small file into a memory, and checks what it reads there, that a write stays private, and a grow. */
  #selfTest(): boolean {
    let path: string | undefined;
    try {
      path = Deno.makeTempFileSync({ prefix: "quire-mapping-" });
      const pattern = Uint8Array.from({ length: 2 * MAPPING_ALIGN }, (_, i) => (i * 7 + 3) % 251);
      Deno.writeFileSync(path, pattern);
      const memory = new WebAssembly.Memory({ initial: 4, maximum: 64, shared: true });
      if (!this.mapInto(memory, MAPPING_ALIGN, path, 0, pattern.byteLength)) return false;
      const read = () => new Uint8Array(memory.buffer, MAPPING_ALIGN, pattern.byteLength);
      if (!read().every((byte, i) => byte === pattern[i])) return false;
      read()[0] = pattern[0]! + 1;
      memory.grow(1);
      return Deno.readFileSync(path)[0] === pattern[0] && read()[0] === pattern[0]! + 1 &&
        read().subarray(1).every((byte, i) => byte === pattern[i + 1]);
    } catch {
      return false;
    } finally {
      if (path !== undefined) Deno.removeSync(path);
    }
  }
}
