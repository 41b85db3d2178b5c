import assert from "node:assert/strict";
import { ByteReader, ByteWriter } from "../../src/util/byte_codec.ts";
import { beginFrame, endFrame, FrameReader } from "../../src/util/byte_frames.ts";
import { concatBytes } from "../../src/util/concat_bytes.ts";
import { chunksOf } from "../_helpers.ts";

/** Frames of 0 to 13 records of a byte, a string and floats, drained after each frame into copies. */
function writeFrames(count: number): Uint8Array {
  const out = new ByteWriter(16);
  const pieces: Uint8Array[] = [];
  for (let frame = 0; frame < count; frame++) {
    const start = beginFrame(out);
    for (let i = 0; i < frame % 14; i++) {
      out.u8(i);
      out.string("é".repeat(i % 3));
      out.words(Float32Array.from({ length: i % 5 }, (_, j) => frame + j / 4));
    }
    endFrame(out, start);
    pieces.push(out.drain().slice());
  }
  return concatBytes(pieces);
}

Deno.test("frames read back from chunks of any size, each aligned for its words", async () => {
  const bytes = writeFrames(60);
  for (const sizes of [[bytes.byteLength], [1], [3, 0, 7], [61_440], [5, 200, 2]]) {
    const frames = new FrameReader(chunksOf(bytes, sizes));
    for (let frame = 0; frame < 60; frame++) {
      const input = new ByteReader((await frames.next())!);
      for (let i = 0; i < frame % 14; i++) {
        assert.equal(input.u8(), i);
        assert.equal(input.string(), "é".repeat(i % 3));
        assert.deepEqual(input.floats(), Float32Array.from({ length: i % 5 }, (_, j) => frame + j / 4), `${sizes}`);
      }
      assert.ok(input.done, `frame ${frame} read to its end, chunks of ${sizes}`);
    }
    assert.equal(await frames.next(), null);
  }
});

Deno.test("a stream of frames cut short is refused, wherever it is cut", async () => {
  const bytes = writeFrames(5);
  for (const end of [1, 3, 6, bytes.byteLength - 1]) {
    const frames = new FrameReader(chunksOf(bytes.subarray(0, end), [4]));
    await assert.rejects(async () => {
      while (await frames.next() !== null);
    }, RangeError);
  }
});
