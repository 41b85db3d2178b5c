import assert from "node:assert/strict";
import { LineTooLongError, textLines } from "../../src/util/text_lines.ts";

const encoder = new TextEncoder();

/** `text` as a stream of `size`-byte chunks. */
async function* chunked(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = encoder.encode(text);
  for (let at = 0; at < bytes.byteLength; at += size) yield bytes.subarray(at, at + size);
}

async function linesOf(stream: AsyncIterable<Uint8Array>, limits = {}): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of textLines(stream, limits)) lines.push(line);
  return lines;
}

Deno.test("lines split across chunks, multi-byte characters included, come out whole", async () => {
  const text = "first line\nsecond, naïve 🦕\n\nlast without newline";
  for (const size of [1, 2, 3, 7, 1000]) {
    assert.deepEqual(await linesOf(chunked(text, size)), text.split("\n"), `chunks of ${size}`);
  }
});

Deno.test("a long line that arrives in small chunks costs time linear in its length", async () => {
  // Searching the whole pending line for "\n" at every chunk made this quadratic: 8 MiB in 1 KiB chunks took minutes.
  const long = "x".repeat(8 * 1024 * 1024);
  const started = performance.now();
  const lines = await linesOf(chunked(`${long}\nend`, 1024));
  const elapsedMs = performance.now() - started;
  assert.deepEqual(lines.map((line) => line.length), [long.length, 3]);
  assert.ok(elapsedMs < 2_000, `took ${elapsedMs.toFixed(0)} ms`);
});

Deno.test("the first line has a bound of its own, enforced as soon as it is passed", async () => {
  let chunks = 0;
  async function* endless(): AsyncGenerator<Uint8Array> {
    for (;;) {
      chunks++;
      yield encoder.encode("y".repeat(1024));
    }
  }
  await assert.rejects(() => linesOf(endless(), { maxFirstChars: 64 * 1024 }), LineTooLongError);
  assert.equal(chunks, 65, "it stops at the first chunk past 64 KiB");
  const lines = await linesOf(chunked(`{"a":1}\n${"z".repeat(100_000)}\n`, 4096), { maxFirstChars: 10 });
  assert.deepEqual(lines.map((line) => line.length), [7, 100_000], "later lines have the general bound");
  await assert.rejects(() => linesOf(chunked(`${"z".repeat(20)}\n`, 64), { maxFirstChars: 10 }), LineTooLongError);
});
