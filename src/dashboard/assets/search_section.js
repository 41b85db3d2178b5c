/**
 * The search playground: every option the API offers, results with highlights, facets, a "Similar" button on each hit
 * (a `similarTo` search for it), and the request as curl.
 */
import { field, h, highlighted, replaceChildren } from "./dom.js";
import { curlCommand } from "./curl_command.js";
import { metadataText } from "./documents_section.js";

const MODES = ["hybrid", "fulltext", "vector"];

/** Texts longer than this show their snippet rather than all of it. */
const LONG_TEXT = 600;

/** The section for index `name`; when `initial.query` is not null, it is filled in and run in `initial.mode`. */
export function searchSection(app, name, initial = { query: null, mode: null }) {
  const query = h("input", { type: "search", name: "query", autocomplete: "off", spellcheck: "false" });
  const mode = h("select", { name: "mode" }, MODES.map((value) => h("option", { value }, value)));
  const limit = h("input", { type: "number", name: "limit", min: 1, max: 100, step: 1, value: 10 });
  const filter = h("textarea", {
    name: "filter",
    rows: 2,
    spellcheck: "false",
    placeholder: '{"year": {"$gte": 2020}}',
  });
  const facets = h("input", { name: "facets", autocomplete: "off", placeholder: "genre, year" });
  const sort = h("input", { name: "sort", autocomplete: "off", placeholder: "year:desc, title:asc" });
  const highlights = h("input", { type: "checkbox", name: "highlights", checked: true });
  const typoTolerance = h("input", { type: "checkbox", name: "typoTolerance", checked: true });
  const prefix = h("input", { type: "checkbox", name: "prefix", checked: true });
  const summary = h("p", { role: "status", class: "status" });
  const results = h("ol", { "aria-label": "Results", class: "results" });
  const facetArea = h("div", {});
  const curl = h("textarea", { readonly: true, rows: 4, spellcheck: "false" });

  function onsubmit(event) {
    event.preventDefault();
    return run(requestOf);
  }

  /** The documents most like hit `id`, within the form's filter, facets, sort and limit. */
  function similarTo(id) {
    return run(() => {
      const { query: _query, mode: _mode, typoTolerance: _typos, prefix: _prefix, ...body } = requestOf();
      return { ...body, similarTo: id };
    }, `Similar to ${id}: `);
  }

  async function run(bodyOf, heading = "") {
    let body;
    try {
      body = bodyOf();
    } catch (error) {
      app.report(error);
      return;
    }
    curl.value = curlCommand({ ...body, projectId: app.projectId });
    try {
      // The playground's searches are the operator's trials, not the application's users': analytics leave them out.
      // The curl command stays what an application would send.
      const { data } = await app.call("search", { ...body, analytics: false });
      app.clearAlert();
      summary.textContent = `${heading}${data.total} matches, ${data.hits.length} shown, ${data.tookMs.toFixed(1)} ms`;
      replaceChildren(results, data.hits.map((hit) => hitItem(hit, similarTo)));
      showFacets(data.facets);
    } catch (error) {
      app.report(error);
    }
  }

  function requestOf() {
    const body = {
      action: "search",
      indexName: name,
      query: query.value,
      mode: mode.value,
      limit: Number(limit.value),
    };
    if (filter.value.trim() !== "") {
      let parsed;
      try {
        parsed = JSON.parse(filter.value);
      } catch (error) {
        throw new Error(`Filter is not valid JSON: ${error.message}`);
      }
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        throw new Error('Filter is not valid JSON: expected an object such as {"year": 2024}');
      }
      body.filter = parsed;
    }
    const facetFields = listOf(facets.value);
    if (facetFields.length > 0) body.facets = facetFields;
    const sortFields = listOf(sort.value).map((item) => {
      const [field, order = "asc"] = item.split(":").map((part) => part.trim());
      if (order !== "asc" && order !== "desc") throw new Error(`Sort "${item}": the order must be "asc" or "desc"`);
      return { field, order };
    });
    if (sortFields.length > 0) body.sort = sortFields;
    if (!typoTolerance.checked) body.typoTolerance = false;
    if (!prefix.checked) body.prefix = false;
    body.include = ["text", "metadata", "score", "passage", ...highlights.checked ? ["highlights", "snippet"] : []];
    return body;
  }

  function showFacets(counts) {
    if (counts === undefined) return replaceChildren(facetArea);
    replaceChildren(
      facetArea,
      h("h3", {}, "Facets"),
      Object.entries(counts).map(([field, values]) =>
        h(
          "div",
          { class: "facet" },
          h("h4", {}, field),
          h("ul", { "aria-label": field }, values.map(({ value, count }) => h("li", {}, `${value} (${count})`))),
        )
      ),
    );
  }

  if (initial.query !== null) {
    query.value = initial.query;
    if (MODES.includes(initial.mode)) mode.value = initial.mode;
    run(requestOf);
  }

  return h(
    "section",
    { class: "card" },
    h("h2", {}, "Search"),
    h(
      "form",
      { class: "grid", onsubmit },
      h("div", { class: "wide" }, field("Search", query)),
      field("Mode", mode),
      field("Limit", limit),
      h("div", { class: "wide" }, field("Filter (JSON)", filter)),
      field("Facets", facets, "Comma-separated metadata fields"),
      field("Sort", sort, "field:asc or field:desc, comma-separated"),
      h(
        "div",
        { class: "checks" },
        h("label", { class: "check" }, highlights, "Highlights"),
        h("label", { class: "check" }, typoTolerance, "Typo tolerance"),
        h("label", { class: "check" }, prefix, "Prefix matching"),
      ),
      h("div", { class: "actions" }, h("button", { type: "submit" }, "Search")),
    ),
    summary,
    results,
    facetArea,
    field("curl command", curl),
    h("button", { type: "button", onclick: () => copy(curl) }, "Copy curl command"),
  );
}

function hitItem(hit, similarTo) {
  const text = hit.text ?? "";
  const shown = text.length > LONG_TEXT && hit.snippet !== undefined
    ? highlighted(hit.snippet.text, hit.snippet.highlights)
    : highlighted(text, hit.highlights);
  return h(
    "li",
    { class: "hit" },
    h(
      "div",
      { class: "hit-head" },
      h("strong", { class: "id" }, hit.id),
      " ",
      hit.pinned ? h("span", { class: "tag" }, "Pinned") : h("span", {}, `Score ${hit.score?.toFixed(4)}`),
      " ",
      h("button", {
        type: "button",
        class: "link",
        "aria-label": `Similar to ${hit.id}`,
        title: "Search for the documents most like this one",
        onclick: () => similarTo(hit.id),
      }, "Similar"),
    ),
    h("p", { class: "text" }, shown),
    // A passage that is the whole text would only repeat it.
    hit.passage && hit.passage.text !== text && h("p", { class: "passage" }, `Passage: ${hit.passage.text}`),
    metadataText(hit.metadata),
  );
}

function listOf(text) {
  return text.split(",").map((item) => item.trim()).filter((item) => item !== "");
}

async function copy(textarea) {
  try {
    await navigator.clipboard.writeText(textarea.value);
  } catch {
    // Without clipboard access (an insecure origin), select it for the person to copy.
    textarea.select();
  }
}
