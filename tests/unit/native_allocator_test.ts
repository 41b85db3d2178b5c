import assert from "node:assert/strict";
import { NativeAllocator } from "../../src/util/native_allocator.ts";

Deno.test("glibc's allocator opens where FFI is allowed on Linux, trims, and does nothing once closed", async () => {
  const allocator = NativeAllocator.open();
  if (Deno.build.os !== "linux") return assert.equal(allocator, undefined);
  assert.ok(allocator !== undefined, "the tests run on glibc with --allow-ffi");
  await allocator.trim();
  allocator.close();
  await allocator.trim();
});
