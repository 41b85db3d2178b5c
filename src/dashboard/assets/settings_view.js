/**
 * An index's settings: its synonyms and pins, edited as lines of text and saved with `updateSettings`. Synonyms are
 * written as in Solr's synonyms files: `sofa, couch, settee` (each finds the others) or `nyc => new york, new york
 * city` (one way); a pin is `refund => policy-7, faq-3` (the query, then the ids that come first).
 */
import { field, h, replaceChildren, whileDisabled } from "./dom.js";

const ARROW = "=>";

/** The synonym entries of a text, a line each; throws naming the line of a malformed one. */
export function parseSynonyms(text) {
  return lines(text).map(({ line, number }) => {
    const arrow = line.indexOf(ARROW);
    if (arrow === -1) {
      const words = commaList(line);
      if (words.length < 2) throw new Error(`Synonyms, line ${number}: list two or more words, separated by commas`);
      return { words };
    }
    const from = line.slice(0, arrow).trim();
    const to = commaList(line.slice(arrow + ARROW.length));
    if (from === "" || to.length === 0) {
      throw new Error(`Synonyms, line ${number}: write a word, "${ARROW}", then what it also finds`);
    }
    return { from, to };
  });
}

/** The pins of a text, a line each; throws naming the line of a malformed one. */
export function parsePins(text) {
  return lines(text).map(({ line, number }) => {
    const arrow = line.lastIndexOf(ARROW);
    const query = arrow === -1 ? "" : line.slice(0, arrow).trim();
    const ids = arrow === -1 ? [] : commaList(line.slice(arrow + ARROW.length));
    if (query === "" || ids.length === 0) {
      throw new Error(`Pins, line ${number}: write the query, "${ARROW}", then the document ids, separated by commas`);
    }
    return { query, ids };
  });
}

/** The settings' synonyms as lines of text. */
export function synonymsText(synonyms) {
  return synonyms.map((entry) =>
    "words" in entry ? entry.words.join(", ") : `${entry.from} ${ARROW} ${entry.to.join(", ")}`
  ).join("\n");
}

/** The settings' pins as lines of text. */
export function pinsText(pins) {
  return pins.map(({ query, ids }) => `${query} ${ARROW} ${ids.join(", ")}`).join("\n");
}

function lines(text) {
  return text.split("\n").map((line, i) => ({ line: line.trim(), number: i + 1 })).filter(({ line }) => line !== "");
}

/** The trimmed, non-empty parts of a comma-separated text. */
export function commaList(text) {
  return text.split(",").map((part) => part.trim()).filter((part) => part !== "");
}

/** Shows the settings of index `name` in `main`; returns the view's disposer. */
export function renderSettingsView(main, app, name) {
  const indexHref = `#/indexes/${encodeURIComponent(name)}`;
  const synonyms = h("textarea", { name: "synonyms", rows: 10, spellcheck: "false", disabled: true });
  const pins = h("textarea", { name: "pins", rows: 6, spellcheck: "false", disabled: true });
  const save = h("button", { type: "submit", disabled: true }, "Save settings");
  const status = h("p", { role: "status", class: "status" }, "Loading…");
  let disposed = false;

  function show(settings) {
    synonyms.value = synonymsText(settings.synonyms);
    pins.value = pinsText(settings.pins);
    for (const control of [synonyms, pins, save]) control.disabled = false;
  }

  async function onsubmit(event) {
    event.preventDefault();
    let settings;
    try {
      settings = { synonyms: parseSynonyms(synonyms.value), pins: parsePins(pins.value) };
    } catch (error) {
      app.report(error);
      return;
    }
    await whileDisabled([save], async () => {
      try {
        const { data: index } = await app.call("updateSettings", { indexName: name, settings });
        app.clearAlert();
        show(index.settings);
        const { synonyms: entries, pins: pinned } = index.settings;
        status.textContent = `Saved: ${entries.length} synonym entries, ${pinned.length} pins`;
      } catch (error) {
        app.report(error);
      }
    });
  }

  replaceChildren(
    main,
    h("h1", { tabindex: "-1" }, `Settings of ${name}`),
    h("p", {}, h("a", { href: indexHref }, `Back to ${name}`)),
    h(
      "form",
      { class: "card", "aria-label": "Index settings", onsubmit },
      h("p", { class: "note" }, "Search uses new settings at once; nothing is rebuilt."),
      field(
        "Synonyms",
        synonyms,
        `One entry a line: "sofa, couch, settee" (each finds the others) or "nyc ${ARROW} new york, new york city" ` +
          "(one way). At most 10,000 entries.",
      ),
      field(
        "Pins",
        pins,
        `One pin a line: "refund ${ARROW} policy-7, faq-3": for that query, those documents come first, in that order.`,
      ),
      save,
      status,
    ),
  );

  app.call("getIndex", { indexName: name }).then(({ data: index }) => {
    if (disposed) return;
    show(index.settings);
    status.textContent = "";
  }, (error) => app.report(error));
  return () => disposed = true;
}
