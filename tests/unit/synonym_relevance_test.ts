/**
 * A small hand-labelled query set for synonyms: 10 queries over 45 shop documents, each document graded 2 (what the
 * query asks for), 1 (related) or 0 (unlabelled), as a person reads them. With the shop's synonyms, full-text search
 * must score a higher mean nDCG@10 than without, and a document holding every word of the query must still rank above
 * each one that the query finds only through a synonym.
 */
import assert from "node:assert/strict";
import { SearchIndex } from "../../src/search/search_index.ts";
import { searchWithSettings } from "../../src/search/settings_search.ts";
import { LoadedSettings } from "../../src/index_state/index_settings.ts";
import { analyzerFor } from "../../src/fulltext/analyzer.ts";

const DOCS: Record<string, string> = {
  s1: "Three-seat sofa in grey linen",
  s2: "Leather couch with reclining seats",
  s3: "Compact settee for small living rooms",
  s4: "Couch cushion covers, set of four",
  s5: "Sofa bed with storage drawer",
  s6: "Coffee table in solid oak",
  t1: "Oak TV stand with two shelves",
  t2: "Television stand with cable management",
  t3: "Wall mount for a 55 inch television",
  t4: "Umbrella stand in brushed steel",
  t5: "Smart TV with 4K screen",
  l1: "Padded laptop bag with shoulder strap",
  l2: "Notebook computer bag, water resistant",
  l3: "Laptop stand for desks",
  l4: "Paper notebook with lined pages",
  l5: "Canvas tote bag for groceries",
  n1: "Hotel rooms in New York City near Central Park",
  n2: "NYC hotel deals for the weekend",
  n3: "Hotels in York, England",
  n4: "Cheap flights to New York",
  p1: "Smartphone case with card holder",
  p2: "Mobile phone case in clear silicone",
  p3: "Cell phone case, shockproof",
  p4: "Pillow case in cotton",
  p5: "Smartphone screen protector",
  f1: "Fridge freezer with ice dispenser",
  f2: "Refrigerator with water filter",
  f3: "Mini refrigerator for dorm rooms",
  f4: "Fridge magnets, set of ten",
  k1: "White leather sneakers",
  k2: "Trainers for men, breathable mesh",
  k3: "Running shoes with cushioned soles",
  k4: "Dress shoes in black leather",
  b1: "Stainless steel trash can with lid",
  b2: "Kitchen bin with pedal",
  b3: "Garbage can for outdoor use",
  b4: "Can opener with soft grip",
  r1: "How to request a refund",
  r2: "Money back guarantee within 30 days",
  r3: "Refund policy for sale items",
  r4: "Returning a gift without a receipt",
  h1: "Free shipping on orders over 50 euros",
  h2: "Free delivery for members",
  h3: "Delivery times and tracking",
  h4: "Shipping to Canada and Mexico",
};

const SYNONYMS = [
  { words: ["sofa", "couch", "settee"] },
  { words: ["tv", "television"] },
  { words: ["laptop", "notebook computer"] },
  { from: "nyc", to: ["new york", "new york city"] },
  { words: ["smartphone", "mobile phone", "cell phone"] },
  { words: ["fridge", "refrigerator"] },
  { words: ["sneakers", "trainers", "running shoes"] },
  { words: ["trash can", "bin", "garbage can"] },
  { words: ["refund", "money back"] },
  { words: ["shipping", "delivery"] },
];

/** Per query: the grade of each labelled document, and the documents that hold every word of the query. */
const QUERIES: { query: string; grades: Record<string, number>; exact: string[] }[] = [
  { query: "couch", grades: { s1: 2, s2: 2, s3: 2, s5: 2, s4: 1 }, exact: ["s2", "s4"] },
  { query: "tv stand", grades: { t1: 2, t2: 2, t3: 1, t5: 1 }, exact: ["t1"] },
  { query: "laptop bag", grades: { l1: 2, l2: 2, l3: 1 }, exact: ["l1"] },
  { query: "nyc hotel", grades: { n1: 2, n2: 2, n4: 1 }, exact: ["n2"] },
  { query: "smartphone case", grades: { p1: 2, p2: 2, p3: 2, p5: 1 }, exact: ["p1"] },
  { query: "fridge", grades: { f1: 2, f2: 2, f3: 2, f4: 1 }, exact: ["f1", "f4"] },
  { query: "sneakers", grades: { k1: 2, k2: 2, k3: 2 }, exact: ["k1"] },
  { query: "trash can", grades: { b1: 2, b2: 2, b3: 2 }, exact: ["b1"] },
  { query: "refund", grades: { r1: 2, r2: 2, r3: 2, r4: 1 }, exact: ["r1", "r3"] },
  { query: "free shipping", grades: { h1: 2, h2: 2, h3: 1, h4: 1 }, exact: ["h1"] },
];

/** nDCG@10 of a ranking against graded labels, with gains 2^grade − 1. */
function ndcgAt10(ranked: string[], grades: Record<string, number>): number {
  const dcg = (gains: number[]) => gains.slice(0, 10).reduce((sum, gain, i) => sum + gain / Math.log2(i + 2), 0);
  const ideal = dcg(Object.values(grades).map((grade) => 2 ** grade - 1).sort((a, b) => b - a));
  return dcg(ranked.map((id) => 2 ** (grades[id] ?? 0) - 1)) / ideal;
}

function shopIndex(): SearchIndex {
  const index = new SearchIndex({ revision: 1 });
  const vector = Float32Array.of(1, 0, 0, 0);
  index.apply(
    Object.entries(DOCS).map(([id, text]) => ({
      id,
      doc: { text, passages: [{ start: 0, end: text.length, vector }] },
    })),
  );
  return index;
}

Deno.test("synonyms raise nDCG@10 on a hand-labelled query set, and exact matches stay on top", () => {
  const index = shopIndex();
  const english = analyzerFor("english");
  const none = new LoadedSettings({ synonyms: [], pins: [] }, english);
  const shop = new LoadedSettings({ synonyms: SYNONYMS, pins: [] }, english);
  const ranked = (settings: LoadedSettings, query: string) =>
    searchWithSettings(index, settings.forQuery(query), {
      mode: "fulltext",
      text: query,
      match: { typoTolerance: true, prefix: true },
      offset: 0,
      limit: 10,
    }).hits.map((hit) => hit.id);
  let without = 0;
  let withSynonyms = 0;
  const lines: string[] = [];
  for (const { query, grades, exact } of QUERIES) {
    const before = ndcgAt10(ranked(none, query), grades);
    const hits = ranked(shop, query);
    const after = ndcgAt10(hits, grades);
    without += before / QUERIES.length;
    withSynonyms += after / QUERIES.length;
    lines.push(`${query.padEnd(16)} ${before.toFixed(3)} → ${after.toFixed(3)}  ${hits.join(" ")}`);
    assert.ok(after >= before, `"${query}": nDCG@10 ${before.toFixed(3)} without synonyms, ${after.toFixed(3)} with`);
    // Every document holding each word of the query ranks above every one found only through a synonym.
    assert.deepEqual(hits.slice(0, exact.length).sort(), [...exact].sort(), `"${query}": ${hits.join(" ")}`);
  }
  console.log(
    `${lines.join("\n")}\nmean nDCG@10: ${without.toFixed(3)} without synonyms, ${withSynonyms.toFixed(3)} with`,
  );
  assert.ok(withSynonyms - without >= 0.2, `mean nDCG@10 ${without.toFixed(3)} → ${withSynonyms.toFixed(3)}`);
});
