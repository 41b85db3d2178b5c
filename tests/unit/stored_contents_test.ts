/**
 * A restored index's texts and metadata as the snapshot stored them (see `src/search/stored_contents.ts`): in buffers
 * of a few MiB filled in turn, each document within one, decoded when read.
 */
import assert from "node:assert/strict";
import { StoredContents } from "../../src/search/stored_contents.ts";
import type { DocContent } from "../../src/search/indexed_doc.ts";

const encoder = new TextEncoder();

Deno.test("stored contents give back every document as added, across buffers and past a buffer's size", () => {
  // Texts of many sizes: most small, some near a buffer's 4 MiB, one past it, empty ones, metadata on some.
  const contents: DocContent[] = Array.from({ length: 3_000 }, (_, i) => {
    const size = i === 1_500 ? 10 << 20 : i % 500 === 7 ? 7 << 20 : i % 13 === 0 ? 0 : 20 + (i * 7919) % 900;
    const text = `${"é".repeat(size >> 2)}${String.fromCodePoint(0x1f600 + (i % 50))}${"x".repeat(size % 4)}`;
    const content: DocContent = { text: i % 13 === 0 ? "" : text };
    if (i % 3 === 0) content.metadata = { i, tag: `t${i % 5}` };
    if (i % 11 === 0) content.spans = Uint32Array.of(0, 1, 1, content.text.length);
    return content;
  });
  const stored = new StoredContents(contents.length);
  contents.forEach((content, slot) => {
    const metadata = content.metadata === undefined
      ? new Uint8Array(0)
      : encoder.encode(JSON.stringify(content.metadata));
    stored.add(slot, encoder.encode(content.text), metadata, content.spans);
  });
  stored.trim();
  contents.forEach((content, slot) => {
    const read = stored.content(slot);
    assert.equal(read.text, content.text, `slot ${slot}`);
    assert.deepEqual(read.metadata, content.metadata);
    assert.deepEqual(read.spans, content.spans);
  });
  const textBytes = contents.reduce((sum, content) => sum + encoder.encode(content.text).byteLength, 0);
  assert.ok(stored.bytes >= textBytes && stored.bytes < textBytes * 1.2 + (8 << 20), `${stored.bytes} bytes held`);
});
