// The felt: the four seats around the wall (each seat's plate, melds, flowers, discards) and
// the centre (tiles left, the timer, the hand, the rules, the wall's commitment, 翻百搭).

import { TablePhase, type SeatView, type TableView } from "./gen/mahjong/gateway/v1/gateway_pb";
import { h, seatOf } from "./dom";
import { PRESET_NAMES, WINDS } from "./labels";
import { meldElement, wildBox, wildMarked } from "./pieces";
import { tileBack, tileElement } from "./tiles";

export type Position = "bottom" | "right" | "top" | "left";
export const POSITIONS: Position[] = ["bottom", "right", "top", "left"];

export function seatZone(v: TableView, s: SeatView | undefined, seat: number, pos: Position, mine: boolean, name: string): HTMLElement {
  const hand = v.hand;
  const dealer = hand ? seatOf(hand.dealer) : null;
  const wind = dealer === null ? "" : WINDS[(seat - dealer + 4) % 4];
  const toAct = hand && !hand.finished && seatOf(hand.toAct) === seat;
  const flags = h(
    "span",
    { class: "flags" },
    dealer === seat ? h("span", { class: "flag dealer", title: "dealer 庄" }, "庄") : null,
    s?.ready ? h("span", { class: "flag ready", "data-testid": `ready-${seat}`, title: "declared ready 敲" }, "敲") : null,
    s?.autoPlay ? h("span", { class: "flag auto", "data-testid": `auto-${seat}`, title: "auto-play 托管" }, "托管") : null,
    s?.bot ? h("span", { class: "flag bot", title: "a bot plays this seat" }, "机") : null,
    s?.left ? h("span", { class: "flag left" }, "left") : null,
  );
  const plate = h(
    "div",
    { class: `plate${toAct ? " to-act" : ""}` },
    h("span", { class: "wind" }, wind),
    h("span", { class: "who" }, name),
    flags,
    h("span", { class: `chips ${s && s.chips < 0n ? "neg" : ""}` }, `${s && s.chips > 0n ? "+" : ""}${s?.chips ?? 0n}`),
  );
  const melds = h("div", { class: "melds" }, ...(s?.melds ?? []).map((m) => meldElement(m)));
  const flowers = h("div", { class: "flowers", "data-testid": `flowers-${seat}` }, ...(s?.flowers ?? []).map((t) => tileElement(t, "sm")));
  const backs = h("div", { class: "backs" });
  if (!mine) for (let i = 0; i < (s?.concealedCount ?? 0); i++) backs.append(tileBack("sm"));
  const discards = h("div", { class: "discards", "data-testid": `discards-${seat}` });
  // a discard another seat claimed has left the pile: it is in that seat's meld (drawn turned)
  const claimed = new Set(s?.claimedDiscards ?? []);
  (s?.discards ?? []).forEach((t, i, all) => {
    if (claimed.has(i)) return;
    const tile = wildMarked(tileElement(t, "sm"), t, hand?.wildKind);
    if (hand && i === all.length - 1 && seatOf(hand.lastDiscardSeat) === seat && hand.lastDiscard === t) tile.classList.add("last");
    discards.append(tile);
  });
  return h(
    "section",
    { class: `seat seat-${pos}${mine ? " mine" : ""}`, "data-seat": String(seat) },
    plate,
    h("div", { class: "row" }, backs, melds, flowers),
    discards,
  );
}

export function center(v: TableView): HTMLElement {
  const hand = v.hand;
  const phase = TablePhase[v.phase].toLowerCase().replace("_", " ");
  return h(
    "div",
    { class: "center" },
    h("div", { class: "wall-count", "data-testid": "tiles-left" }, hand ? String(hand.tilesLeft) : "—", h("small", {}, "tiles left")),
    h("div", { class: "timer", "data-testid": "timer" }, ""),
    h(
      "div",
      { class: "meta" },
      hand ? `hand ${hand.handNumber}${v.maxHands ? ` / ${v.maxHands}` : ""}` : phase,
      hand && hand.huangfan ? ` · 荒番 ${hand.huangfan}` : "",
      hand && hand.kaibao ? " · 开宝" : "",
    ),
    hand ? h("div", { class: "commit", title: "SHA-256 of the wall's seed, revealed at the end" }, `commitment ${hand.commitment.slice(0, 12)}…`) : null,
    h("div", { class: "rules", "data-testid": "rules" }, PRESET_NAMES[v.ruleset?.name ?? ""] ?? v.ruleset?.name ?? ""),
    hand?.wildIndicator ? wildBox(hand.wildIndicator, hand.wildKind) : null,
  );
}
