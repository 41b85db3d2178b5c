import assert from "node:assert/strict";
import { ByteReader, ByteWriter } from "../../src/util/byte_codec.ts";
import { concatBytes } from "../../src/util/concat_bytes.ts";

Deno.test("a writer drained in pieces at any offset writes what one undrained writer writes, aligned alike", () => {
  const floats = Float32Array.from({ length: 5 }, (_, i) => i / 3);
  const write = (out: ByteWriter, drain: () => void) => {
    for (let i = 0; i < 40; i++) {
      out.u8(i);
      drain();
      out.string("é".repeat(i % 5));
      out.words(floats.subarray(0, i % 6));
      drain();
      out.append(Uint8Array.of(i, i + 1, i + 2).subarray(0, i % 4));
    }
  };
  const whole = new ByteWriter(16);
  write(whole, () => {});
  const pieced = new ByteWriter(16);
  const pieces: Uint8Array[] = [];
  write(pieced, () => pieces.push(pieced.drain().slice()));
  pieces.push(pieced.drain().slice());
  assert.equal(pieced.length, 0);
  assert.deepEqual(concatBytes(pieces), whole.bytes());

  const input = new ByteReader(concatBytes(pieces));
  for (let i = 0; i < 40; i++) {
    assert.equal(input.u8(), i);
    assert.equal(input.string(), "é".repeat(i % 5));
    assert.deepEqual(input.floats(), floats.subarray(0, i % 6));
    for (let j = 0; j < i % 4; j++) assert.equal(input.u8(), i + j);
  }
  assert.ok(input.done);
});

Deno.test("uint lists read back as plain arrays what words wrote, at any alignment of the reader's bytes", () => {
  const out = new ByteWriter(16);
  const lists = [[], [7], [1, 4_294_967_295, 3], Array.from({ length: 50 }, (_, i) => i * 1_000_003)];
  for (const list of lists) {
    out.u8(1);
    out.words(Uint32Array.from(list));
  }
  const bytes = out.bytes();
  // The reader's bytes at an odd offset of their buffer: it copies them to read words aligned.
  const shifted = new Uint8Array(bytes.byteLength + 1);
  shifted.set(bytes, 1);
  for (const input of [new ByteReader(bytes), new ByteReader(shifted.subarray(1))]) {
    for (const list of lists) {
      assert.equal(input.u8(), 1);
      const read = input.uintList();
      assert.ok(Array.isArray(read));
      assert.deepEqual(read, list);
    }
    assert.ok(input.done);
  }
});
