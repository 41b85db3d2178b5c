/** Unit: the dashboard's fixes for a query that found nothing change the index's synonyms and pins as they should. */
import assert from "node:assert/strict";
import { fixesNote, withPin, withSynonym } from "../../src/dashboard/assets/query_fixes.js";

Deno.test("a synonym is added one way, after the entries there are", () => {
  const synonyms = [{ words: ["seat", "chair"] }];
  assert.deepEqual(withSynonym(synonyms, "sofa", ["couch", "settee"]), [
    { words: ["seat", "chair"] },
    { from: "sofa", to: ["couch", "settee"] },
  ]);
  assert.deepEqual(synonyms, [{ words: ["seat", "chair"] }], "the settings read are left as they were");
});

Deno.test("a pin replaces the pin of the same query in place, or comes last", () => {
  const pins = [{ query: "Refund", ids: ["faq-3"] }, { query: "returns", ids: ["policy-7"] }];
  assert.deepEqual(withPin(pins, "refund", ["policy-7", "faq-3"]), [
    { query: "refund", ids: ["policy-7", "faq-3"] },
    { query: "returns", ids: ["policy-7"] },
  ]);
  assert.deepEqual(withPin(pins, "sofa", ["couch-1"]).at(-1), { query: "sofa", ids: ["couch-1"] });
  assert.equal(pins[0]!.query, "Refund", "the settings read are left as they were");
});

Deno.test("the note of a query names what its synonyms add and what is pinned for it", () => {
  const settings = {
    synonyms: [
      { from: "Sofa", to: ["couch"] },
      { words: ["sofa", "settee"] },
      { from: "couch", to: ["sofa"] },
      { from: "red  sofa", to: ["crimson couch"] },
    ],
    pins: [{ query: "sofa ", ids: ["couch-1", "couch-2"] }],
  };
  assert.equal(fixesNote(settings, "sofa"), "Synonyms: couch, settee; Pinned: couch-1, couch-2");
  assert.equal(fixesNote(settings, "red sofa"), "Synonyms: crimson couch");
  assert.equal(fixesNote(settings, "lamp"), "");
});
