/**
 * Builds the page from data without ever parsing it as HTML: every string becomes a text node or an attribute value,
 * so a document's text, id or metadata cannot turn into markup.
 */

/**
 * An element with attributes and children. Attribute values of `undefined`, `null` or `false` are left out, `true`
 * sets an empty attribute, and `on…` functions become event listeners. Children are nodes or strings (as text).
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === "function") element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  element.append(...children.flat().filter((child) => child !== undefined && child !== null && child !== false));
  return element;
}

let fields = 0;

/**
 * A labelled form field: a `<label for>` names the control, and a hint (if any) describes it without becoming part of
 * its name.
 */
export function field(labelText, control, hint) {
  const id = control.id || `field-${++fields}`;
  control.id = id;
  let hintNode;
  if (hint !== undefined) {
    hintNode = h("small", { id: `${id}-hint` }, hint);
    control.setAttribute("aria-describedby", hintNode.id);
  }
  return h("div", { class: "field" }, h("label", { for: id }, labelText), control, hintNode);
}

/**
 * Runs `work` with `buttons` disabled, so that it cannot start twice, and then gives the keyboard focus back to where
 * it was (a disabled button loses it).
 */
export async function whileDisabled(buttons, work) {
  const focused = document.activeElement;
  for (const button of buttons) button.disabled = true;
  try {
    return await work();
  } finally {
    for (const button of buttons) button.disabled = false;
    if (document.activeElement === document.body && focused?.isConnected) focused.focus();
  }
}

/** Replaces every child of `element` with `children`. */
export function replaceChildren(element, ...children) {
  element.replaceChildren(...children.flat().filter((child) => child !== undefined && child !== null));
}

/** `text` cut to `length` characters, with "…" where it was cut. */
export function shorten(text, length) {
  return text.length <= length ? text : `${text.slice(0, length).trimEnd()}…`;
}

/** Text with the ranges of `highlights` (`{start, end}` offsets) wrapped in `<mark>`, as nodes. */
export function highlighted(text, highlights = []) {
  const nodes = [];
  let at = 0;
  for (const { start, end } of [...highlights].sort((a, b) => a.start - b.start)) {
    if (start < at || end > text.length) continue;
    if (start > at) nodes.push(text.slice(at, start));
    nodes.push(h("mark", {}, text.slice(start, end)));
    at = end;
  }
  if (at < text.length) nodes.push(text.slice(at));
  return nodes;
}

/** A byte count as people read it. */
export function formatBytes(bytes) {
  if (bytes === undefined) return "—";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

/** An ISO time in the reader's locale. */
export function formatTime(iso) {
  return new Date(iso).toLocaleString();
}

/** An index's status, with its job's progress while one runs. */
export function statusNodes(index) {
  if (index.progress === undefined) return [index.status];
  const { done, total } = index.progress;
  return [
    `${index.status} ${done}/${total}`,
    h("progress", { value: done, max: Math.max(total, 1), "aria-label": `${index.name} progress` }),
  ];
}
