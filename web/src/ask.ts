// A question the player answers before anything costs silver: a dialog on top of the page
// with the price in words and two buttons (large enough to tap), resolved true only by the
// confirming one (Escape or the backdrop: no).

import { button, h } from "./dom";

export function ask(title: string, body: string, yes: string, no = "Cancel"): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (answer: boolean) => {
      backdrop.remove();
      removeEventListener("keydown", onKey);
      resolve(answer);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") done(false);
    };
    const dialog = h(
      "div",
      { class: "ask", role: "dialog", "aria-modal": "true", "data-testid": "ask" },
      h("h2", {}, title),
      h("p", { "data-testid": "ask-body" }, body),
      h("div", { class: "row" }, button(no, "ask-no", () => done(false), "ghost"), button(yes, "ask-yes", () => done(true), "primary")),
    );
    const backdrop = h("div", { class: "ask-backdrop" }, dialog);
    backdrop.addEventListener("click", (e) => {
      if (e.target === backdrop) done(false);
    });
    addEventListener("keydown", onKey);
    document.body.append(backdrop);
    dialog.querySelector<HTMLButtonElement>("[data-testid=ask-yes]")?.focus();
  });
}
