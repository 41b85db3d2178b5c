/** Paging by the API's cursor: "Previous page" and "Next page" over a stack of the cursors seen. */
import { h } from "./dom.js";

/** Pages through `load(cursor)`, which shows that page and resolves to the next page's cursor (or undefined). */
export class Pager {
  #load;
  #onError;
  /** The cursor of each page up to the one on show; the first page has none. */
  #cursors = [undefined];
  #next;
  #previousButton = h("button", { type: "button", disabled: true, onclick: () => this.#go(-1) }, "Previous page");
  #nextButton = h("button", { type: "button", disabled: true, onclick: () => this.#go(1) }, "Next page");
  #label = h("span", { class: "page" }, "Page 1");

  /** The buttons, for the view to place. */
  controls = h("div", { class: "pager" }, this.#previousButton, this.#label, this.#nextButton);

  /** `onError` hears a failed load of a page that a button asked for. */
  constructor(load, onError) {
    this.#load = load;
    this.#onError = onError;
  }

  /** Shows the first page again. */
  first() {
    this.#cursors = [undefined];
    return this.reload();
  }

  /** Shows the current page again. */
  async reload() {
    this.#next = await this.#load(this.#cursors.at(-1));
    this.#previousButton.disabled = this.#cursors.length === 1;
    this.#nextButton.disabled = this.#next === undefined;
    this.#label.textContent = `Page ${this.#cursors.length}`;
  }

  async #go(step) {
    if (step > 0 && this.#next !== undefined) this.#cursors.push(this.#next);
    if (step < 0 && this.#cursors.length > 1) this.#cursors.pop();
    await this.reload().catch(this.#onError);
  }
}
