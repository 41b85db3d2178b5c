import assert from "node:assert/strict";
import { TermPostings } from "../../src/fulltext/term_postings.ts";
import { SortedWords } from "../../src/fulltext/sorted_words.ts";
import { wordsWithin } from "../../src/fulltext/word_walks.ts";
import { mulberry32 } from "../../src/util/seeded_random.ts";

Deno.test("term postings list each term's holders through adds and removals, a single holder as a number", () => {
  const next = mulberry32(11);
  const postings = new TermPostings();
  const model = new Map<string, Set<number>>();
  for (let step = 0; step < 20_000; step++) {
    const term = `t${Math.floor(next() * 40)}`;
    const slot = Math.floor(next() * 12);
    const holders = model.get(term) ?? new Set();
    if (holders.has(slot)) {
      holders.delete(slot);
      assert.equal(postings.delete(term, slot), holders.size);
    } else {
      assert.equal(postings.add(term, slot), holders.size === 0);
      holders.add(slot);
    }
    if (holders.size === 0) model.delete(term);
    else model.set(term, holders);
    if (step % 97 === 0) {
      for (const [term, holders] of model) {
        assert.deepEqual([...postings.slots(term)!].sort((a, b) => a - b), [...holders].sort((a, b) => a - b));
        assert.equal(postings.count(term), holders.size);
      }
      assert.equal(postings.terms, model.size);
      assert.equal(postings.lists, [...model.values()].filter((holders) => holders.size > 1).length);
    }
  }
  assert.equal(postings.delete("absent", 1), -1);
  assert.equal(postings.slots("absent"), undefined);
});

Deno.test("sorted words stay sorted and distinct through adds and removals across many blocks", () => {
  const next = mulberry32(5);
  const words = new SortedWords();
  const model = new Set<string>();
  for (let step = 0; step < 30_000; step++) {
    const word = Math.floor(next() * 5_000).toString(36);
    if (next() < 0.3) assert.equal(words.delete(word), model.delete(word));
    else {
      assert.equal(words.add(word), !model.has(word));
      model.add(word);
    }
  }
  assert.deepEqual(words.words(), [...model].sort());
  assert.equal(words.size, model.size);
  assert.deepEqual(SortedWords.from([...model].reverse()).words(), words.words());
  // Words in order are taken as they come (a snapshot's); in order but repeated, they are made distinct.
  assert.deepEqual(SortedWords.from(words.words()).words(), words.words());
  const repeated = words.words().flatMap((word) => [word, word]);
  assert.deepEqual(SortedWords.from(repeated).words(), words.words());
  assert.equal(SortedWords.from(repeated).size, words.size);
});

Deno.test("the typo walk finds exactly the words within the edits allowed, as a full comparison does", () => {
  const next = mulberry32(9);
  const letters = "abcde";
  const word = () => Array.from({ length: 2 + Math.floor(next() * 6) }, () => letters[Math.floor(next() * 5)]).join("");
  const all = [...new Set(Array.from({ length: 3_000 }, word))];
  const set = SortedWords.from(all);
  for (let i = 0; i < 200; i++) {
    const query = word();
    for (const edits of [1, 2]) {
      const found = new Map(wordsWithin(set, query, edits).map((near) => [near.word, near.edits]));
      const expected = new Map(all.map((w) => [w, distance(w, query)] as const).filter(([, d]) => d <= edits));
      assert.deepEqual(found, expected, `"${query}" within ${edits}`);
    }
  }
});

/**
 * Edit distance with swaps of neighbours (optimal string alignment), computed in full, where an edit on the first
 * letter (an insertion before it, its deletion, substitution or swap) counts as two.
 */
function distance(a: string, b: string): number {
  const d = Array.from(
    { length: a.length + 1 },
    (_, i) => Array.from({ length: b.length + 1 }, (_, j) => i + j + (i > 0 || j > 0 ? 1 : 0)),
  );
  d[0]![0] = 0;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const substitution = a[i - 1] === b[j - 1] ? 0 : i === 1 && j === 1 ? 2 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + substitution);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + (j === 2 ? 2 : 1));
      }
    }
  }
  return d[a.length]![b.length]!;
}
