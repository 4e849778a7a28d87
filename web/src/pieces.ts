// Pieces of the table drawn in several places: melds, the 翻百搭 indicator, 百搭 tiles.

import { MeldKind, type Meld } from "./gen/mahjong/common/v1/common_pb";
import { h } from "./dom";
import { tileBack, tileElement, tileLabel } from "./tiles";

/** 翻百搭 (RULES-presets §13.B.9): the indicator turned up beside the wall, and the kind it
 * makes 百搭 this hand. */
export function wildBox(indicator: number, wild: number): HTMLElement {
  const shown = tileElement(indicator, "md");
  shown.setAttribute("data-testid", "wild-indicator");
  const kind = wildMarked(tileElement(wild, "md"), wild, wild);
  kind.setAttribute("data-testid", "wild-kind");
  return h(
    "div",
    { class: "wild", "data-testid": "wild", title: `翻百搭: ${tileLabel(indicator)} turned up, every ${tileLabel(wild)} is 百搭` },
    h("span", { class: "wild-label" }, "翻"),
    shown,
    h("span", { class: "wild-arrow" }, "→"),
    kind,
    h("span", { class: "wild-label" }, "百搭"),
  );
}

/** A tile of the flipped wild kind wears a 百搭 badge wherever it is shown. */
export function wildMarked(tile: HTMLElement, value: number, wild: number | undefined): HTMLElement {
  if (wild && value === wild) {
    tile.classList.add("wild-tile");
    tile.append(h("span", { class: "wild-badge" }, "搭"));
  }
  return tile;
}

export function meldElement(m: Meld): HTMLElement {
  const box = h("span", { class: `meld meld-${m.kind}` });
  if (m.kind === MeldKind.CONCEALED_KONG && m.tiles.length === 0) for (let i = 0; i < 4; i++) box.append(tileBack("sm"));
  else m.tiles.forEach((t, i) => {
    const tile = m.kind === MeldKind.CONCEALED_KONG && (i === 0 || i === 3) ? tileBack("sm") : tileElement(t, "sm");
    if (m.claimedTile && t === m.claimedTile) tile.classList.add("claimed");
    box.append(tile);
  });
  return box;
}
