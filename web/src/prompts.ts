// The person's own hand and what the prompt offers: tiles to click (discard, 敲, 换牌) and the
// option buttons (win, kongs, pong, chows, pass, 托管 off, the hint), the hinted one glowing.

import { type MessageInitShape } from "@bufbuild/protobuf";
import { MeldKind } from "./gen/mahjong/common/v1/common_pb";
import { PromptKind, type ActionSchema, type Action, type Prompt, type SeatView, type TableView } from "./gen/mahjong/gateway/v1/gateway_pb";
import { button, h } from "./dom";
import { keyOf } from "./keys";
import { promptText } from "./labels";
import { wildMarked } from "./pieces";
import { tileElement, tileLabel } from "./tiles";

export type ActionKind = MessageInitShape<typeof ActionSchema>["kind"];

/** What the hand needs of the table screen: its view and the person's choices so far. */
export interface PromptHost {
  view: TableView | null;
  ready: boolean; // 敲 chosen: the next discard declares ready
  swap: Set<number>; // indexes of concealed tiles picked to bury (换牌)
  hint: { action: Action; plan: string } | null; // for the pending prompt
  act(kind: ActionKind): Promise<void>;
  askHint(): Promise<void>;
  render(): void;
}

export function handSection(host: PromptHost, v: TableView, s: SeatView | undefined): HTMLElement {
  const prompt = v.prompt;
  const opts = prompt?.options;
  const own = prompt?.kind === PromptKind.OWN_TURN;
  const swapping = prompt?.kind === PromptKind.TILE_SWAP;
  const allowed = new Set(own ? (host.ready ? opts?.readyDiscards : opts?.discards) ?? [] : []);
  const tiles = h("div", { class: "my-tiles", "data-testid": "my-tiles" });
  const concealed = [...(s?.concealed ?? [])];
  // the drawn tile stands apart at the right, as at a real table
  const drawnAt = s && s.drawn ? concealed.lastIndexOf(s.drawn) : -1;
  const order = concealed.map((t, i) => ({ t, i })).filter((x) => x.i !== drawnAt).sort((a, b) => a.t - b.t);
  if (drawnAt >= 0) order.push({ t: concealed[drawnAt], i: drawnAt });
  for (const { t, i } of order) {
    const tile = wildMarked(tileElement(t, "lg"), t, v.hand?.wildKind);
    tile.setAttribute("data-testid", "hand-tile");
    tile.tabIndex = -1; // reached with the arrow keys (table.ts), Tab goes to the playable ones
    tile.setAttribute("role", "button");
    if (i === drawnAt) tile.classList.add("drawn");
    if (own && allowed.has(t)) {
      tile.classList.add("playable");
      tile.setAttribute("data-playable", "1");
      tile.tabIndex = 0;
      tile.addEventListener("click", () =>
        void host.act(host.ready ? { case: "declareReady", value: { discard: t } } : { case: "discard", value: { tile: t } }),
      );
      if (hinted(host, "discard", t)) tile.classList.add("hinted");
    }
    if (swapping) {
      tile.classList.add("playable");
      if (host.swap.has(i)) tile.classList.add("picked");
      if (hinted(host, "swap", t)) tile.classList.add("hinted");
      tile.addEventListener("click", () => {
        if (host.swap.has(i)) host.swap.delete(i);
        else if (host.swap.size < (opts?.swapCount ?? 0)) host.swap.add(i);
        host.render();
      });
    }
    tiles.append(tile);
  }
  const bar = h("div", { class: "options", "data-testid": "options" });
  if (prompt && opts) options(host, prompt, bar, concealed);
  if (s?.autoPlay) bar.append(button("Take back control (托管 off)", "opt-resume", () => void host.act({ case: "resume", value: {} }), "warn"));
  bar.querySelectorAll<HTMLElement>("button").forEach((b, i) => {
    const key = keyOf(b.dataset.testid ?? "");
    if (key) b.append(h("kbd", {}, key));
    else if (b.dataset.testid?.startsWith("opt-chow-")) b.append(h("kbd", {}, String(Number(b.dataset.testid.slice(9)) + 1)));
    void i;
  });
  const hintText = host.hint && prompt ? host.hint.plan : "";
  return h(
    "section",
    { class: `my-hand${prompt ? " prompted" : ""}`, "data-testid": "my-hand" },
    h("div", { class: "prompt-line", "data-testid": "prompt" }, promptText(prompt, host.ready), hintText ? h("span", { class: "plan", "data-testid": "hint-plan" }, `提示: ${hintText}`) : null),
    tiles,
    bar,
  );
}

function options(host: PromptHost, prompt: Prompt, bar: HTMLElement, concealed: number[]): void {
  const o = prompt.options!;
  const add = (label: string, testid: string, kind: ActionKind, hintKey: string, cls = "", tile = 0) => {
    const b = button(label, testid, () => void host.act(kind), cls);
    if (hinted(host, hintKey, tile)) b.classList.add("hinted");
    bar.append(b);
  };
  switch (prompt.kind) {
    case PromptKind.OWN_TURN:
      if (o.winShape) add("胡 Win (自摸)", "opt-win", { case: "win", value: { eightFlowers: false } }, "win", "win");
      if (o.winEightFlowers) add("八花齐 Eight flowers", "opt-eight-flowers", { case: "win", value: { eightFlowers: true } }, "win", "win");
      for (const t of o.concealedKongs) add(`暗杠 ${tileLabel(t)}`, `opt-concealed-kong-${t}`, { case: "kong", value: { kind: MeldKind.CONCEALED_KONG, tile: t } }, `kong-${MeldKind.CONCEALED_KONG}`, "", t);
      for (const t of o.addedKongs) add(`加杠 ${tileLabel(t)}`, `opt-added-kong-${t}`, { case: "kong", value: { kind: MeldKind.ADDED_KONG, tile: t } }, `kong-${MeldKind.ADDED_KONG}`, "", t);
      if (o.readyDiscards.length) {
        const b = button(host.ready ? "敲 on: pick the discard" : "敲 Declare ready", "opt-ready", () => {
          host.ready = !host.ready;
          host.render();
        }, host.ready ? "active" : "");
        if (host.hint?.action.kind.case === "declareReady") b.classList.add("hinted");
        bar.append(b);
      }
      break;
    case PromptKind.CLAIM:
    case PromptKind.ROB_KONG:
      if (o.win) add(prompt.kind === PromptKind.ROB_KONG ? "抢杠胡 Rob the kong" : "胡 Win", "opt-win", { case: "win", value: { eightFlowers: false } }, "win", "win");
      if (o.exposedKong) add("杠 Kong", "opt-kong", { case: "kong", value: { kind: MeldKind.EXPOSED_KONG, tile: 0 } }, `kong-${MeldKind.EXPOSED_KONG}`);
      if (o.pong) add("碰 Pong", "opt-pong", { case: "pong", value: {} }, "pong");
      o.chows.forEach((c, i) => {
        const b = button("", `opt-chow-${i}`, () => void host.act({ case: "chow", value: { tiles: c.tiles } }));
        b.append("吃 ", ...c.tiles.map((t) => tileElement(t, "sm")));
        const a = host.hint?.action.kind;
        if (a?.case === "chow" && a.value.tiles.join() === c.tiles.join()) b.classList.add("hinted");
        bar.append(b);
      });
      if (o.pass) add("过 Pass", "opt-pass", { case: "pass", value: {} }, "pass", "ghost");
      break;
    case PromptKind.TILE_SWAP: {
      const picked = [...host.swap].map((i) => concealed[i]);
      const b = button(`换牌 bury ${picked.length}/${o.swapCount}`, "opt-swap", () => void host.act({ case: "tileSwap", value: { tiles: picked } }));
      b.disabled = picked.length !== o.swapCount;
      bar.append(b);
      break;
    }
  }
  if (host.view?.hints) bar.append(button("提示 Hint", "opt-hint", () => void host.askHint(), "ghost"));
}

/** Whether the hint names this option (``kind``: the action's case, ``kong-<MeldKind>``). */
export function hinted(host: PromptHost, kind: string, tile = 0): boolean {
  const a = host.hint?.action.kind;
  if (!a || !host.view?.prompt) return false;
  switch (a.case) {
    case "discard":
      return kind === "discard" && a.value.tile === tile;
    case "declareReady":
      return (kind === "ready" || kind === "discard") && a.value.discard === tile;
    case "kong":
      return kind === `kong-${a.value.kind}` && (a.value.tile === 0 || a.value.tile === tile);
    case "tileSwap":
      return kind === "swap" && a.value.tiles.includes(tile);
    default:
      return kind === a.case;
  }
}
