// The page's DOM helpers: elements, buttons, the error banner.

import type { ApiError } from "./api";

export const app = document.getElementById("app")!;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string | null | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) e.append(c);
  return e;
}

export function button(label: string, testid: string, onClick: () => void, cls = ""): HTMLButtonElement {
  const b = h("button", { class: `btn ${cls}`, "data-testid": testid, type: "button" }, label);
  b.addEventListener("click", onClick);
  return b;
}

/** A proto Seat (seat + 1, 0 = unset) as a seat index, null when unset. */
export function seatOf(v: number): number | null {
  return v > 0 ? v - 1 : null; // proto Seat: seat + 1, 0 = unset
}

export function banner(err: ApiError, where: HTMLElement): void {
  const box = h(
    "div",
    { class: "error", role: "alert", "data-testid": "error" },
    h("strong", {}, `${err.code}${err.reason && err.reason !== err.code ? ` · ${err.reason}` : ""}`),
    h("span", {}, err.message),
  );
  where.querySelector(".error")?.remove();
  where.prepend(box);
  if (!err.fatal) setTimeout(() => box.remove(), 6000);
}
