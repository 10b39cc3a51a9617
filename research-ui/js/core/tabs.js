// Accessible tabs (WAI-ARIA pattern): click or arrow keys select; only the selected tab is in the tab order.

export class Tabs {
  /**
   * @param {HTMLElement} tablist
   * @param {(panelId: string) => void} [onChange]
   */
  constructor(tablist, onChange = () => {}) {
    this.tabs = /** @type {HTMLButtonElement[]} */ ([...tablist.querySelectorAll('[role="tab"]')]);
    this.onChange = onChange;
    for (const tab of this.tabs) {
      tab.addEventListener("click", () => this.select(tab.id));
      tab.addEventListener("keydown", (event) => this.key(event, tab));
    }
    const selected = this.tabs.find((t) => t.getAttribute("aria-selected") === "true") || this.tabs[0];
    this.select(selected.id, { silent: true });
  }

  /** @param {string} tabId @param {{focus?: boolean, silent?: boolean}} [how] */
  select(tabId, how = {}) {
    for (const tab of this.tabs) {
      const on = tab.id === tabId;
      tab.setAttribute("aria-selected", String(on));
      tab.tabIndex = on ? 0 : -1;
      const panel = document.getElementById(tab.getAttribute("aria-controls") || "");
      if (panel) panel.hidden = !on;
      if (on && how.focus) tab.focus();
    }
    this.current = tabId;
    if (!how.silent) this.onChange(tabId);
  }

  key(event, tab) {
    const i = this.tabs.indexOf(tab);
    const last = this.tabs.length - 1;
    const to = { ArrowRight: i === last ? 0 : i + 1, ArrowLeft: i === 0 ? last : i - 1, Home: 0, End: last }[
      event.key
    ];
    if (to === undefined) return;
    event.preventDefault();
    this.select(this.tabs[to].id, { focus: true });
  }
}
