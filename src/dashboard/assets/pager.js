/** Paging by the API's cursor: "Previous page" and "Next page" over a stack of the cursors seen. */
import { h } from "./dom.js";

/**
 * Pages through `load(cursor)`, which shows that page and resolves to the next page's cursor (or undefined). Loads run
 * one at a time, in the order asked, so that a refresh that ends late never shows an older page under a newer label.
 */
export class Pager {
  #load;
  #onError;
  /** The cursor of each page up to the one on show; the first page has none. */
  #cursors = [undefined];
  #next;
  /** The load in progress, which the next one waits for. */
  #queue = Promise.resolve();
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
    return this.#serially(() => this.#cursors = [undefined]);
  }

  /** Shows the current page again. */
  reload() {
    return this.#serially(() => {});
  }

  #go(step) {
    this.#serially(() => {
      if (step > 0 && this.#next !== undefined) this.#cursors.push(this.#next);
      if (step < 0 && this.#cursors.length > 1) this.#cursors.pop();
    }).catch(this.#onError);
  }

  /** Moves (as `move` says) and shows the page, after every load asked for before. */
  #serially(move) {
    const run = this.#queue.then(async () => {
      move();
      this.#next = await this.#load(this.#cursors.at(-1));
      const focused = document.activeElement;
      this.#previousButton.disabled = this.#cursors.length === 1;
      this.#nextButton.disabled = this.#next === undefined;
      this.#label.textContent = `Page ${this.#cursors.length}`;
      // A button that the keyboard was on and that is now disabled hands the focus to the other one.
      if (focused?.disabled) (focused === this.#nextButton ? this.#previousButton : this.#nextButton).focus();
    });
    // The caller hears of a failure through `run`; the queue only orders loads, so a failed one must not block the
    // later ones.
    this.#queue = run.catch(() => {});
    return run;
  }
}
