// The keys of the table: each option button answers to one (its key is shown on it), so a turn
// can be played with the keyboard alone (arrows and Enter choose the discard, table.ts).

/** Key (lower case; " " is Space) -> the options it presses, the first one shown wins. */
export const KEYS: Record<string, string[]> = {
  h: ["opt-win", "opt-eight-flowers"], // 胡
  p: ["opt-pong"], // 碰
  c: ["opt-chow-0"], // 吃 (1-3 pick among several chows)
  "1": ["opt-chow-0"],
  "2": ["opt-chow-1"],
  "3": ["opt-chow-2"],
  k: ["opt-kong", "opt-concealed-kong-", "opt-added-kong-"], // 杠 (a prefix: the first offered)
  r: ["opt-ready"], // 敲
  " ": ["opt-pass"], // 过
  escape: ["opt-pass"],
  s: ["opt-swap"],
  t: ["opt-resume"], // 托管 off
  "?": ["opt-hint"],
};

/** The key shown on an option button (its test id), if it has one. */
export function keyOf(testid: string): string {
  for (const [key, ids] of Object.entries(KEYS)) {
    if (key.length === 1 && /[0-9]/.test(key)) continue;
    if (ids.some((id) => (id.endsWith("-") ? testid.startsWith(id) : testid === id))) {
      return key === " " ? "Space" : key === "escape" ? "Esc" : key.toUpperCase();
    }
  }
  return "";
}

/** The test id of the option button ``key`` presses now in ``root``, if any. */
export function keyAction(key: string, root: HTMLElement): string | null {
  for (const id of KEYS[key.toLowerCase()] ?? []) {
    const sel = id.endsWith("-") ? `[data-testid^="${id}"]` : `[data-testid="${id}"]`;
    const b = root.querySelector<HTMLButtonElement>(`.options ${sel}`);
    if (b && !b.disabled) return b.dataset.testid ?? null;
  }
  return null;
}
