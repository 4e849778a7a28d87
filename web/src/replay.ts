// 牌谱: a finished hand stepped through as the player's seat saw it. The events come from the
// gateway's GetReplay (the session's own hands only: the seat's copy of each event, its own
// concealed tiles and every public fact); each step shows the board after that event — the
// seat's concealed hand, every seat's flowers, melds and discards — folded from the events here.

import { MeldKind, type Meld } from "./gen/mahjong/common/v1/common_pb";
import type { Event } from "./gen/mahjong/gateway/v1/gateway_pb";
import { apiError, gateway } from "./api";
import { app, banner, button, h, seatOf } from "./dom";
import { meldElement } from "./pieces";
import type { SignedIn } from "./session";
import { tileElement, tileLabel } from "./tiles";

/** The board after a step. */
interface Board {
  hand: number[]; // the seat's concealed tiles
  melds: Meld[][];
  discards: number[][];
  flowers: number[][];
  left: number; // tiles left in the wall
  caption: string; // what this step's event did
}

const CLAIMED = new Set([MeldKind.CHOW, MeldKind.PONG, MeldKind.EXPOSED_KONG]);

function take(hand: number[], tiles: Iterable<number>): void {
  for (const t of tiles) {
    const i = hand.indexOf(t);
    if (i >= 0) hand.splice(i, 1);
  }
}

/** A meld's tiles that left the declaring seat's hand (the claimed tile came from a discard; an
 * added kong adds one tile to its pong). */
function fromHand(m: Meld): number[] {
  if (m.kind === MeldKind.ADDED_KONG) return m.tiles.slice(0, 1);
  if (!CLAIMED.has(m.kind)) return [...m.tiles];
  const rest = [...m.tiles];
  take(rest, [m.claimedTile]);
  return rest;
}

function step(prev: Board, e: Event, mine: number, name: (s: number | null) => string): Board {
  const b: Board = {
    hand: [...prev.hand],
    melds: prev.melds.map((m) => [...m]),
    discards: prev.discards.map((d) => [...d]),
    flowers: prev.flowers.map((f) => [...f]),
    left: prev.left,
    caption: "",
  };
  const k = e.kind;
  switch (k.case) {
    case "handStarted":
      b.caption = `hand ${k.value.handNumber} begins, ${name(seatOf(k.value.dealer))} deals`;
      break;
    case "tilesDealt":
      for (const s of k.value.hands) if (seatOf(s.seat) === mine) b.hand = [...s.tiles];
      b.left = k.value.tilesLeft;
      b.caption = "the deal";
      break;
    case "flowersExposed": {
      const s = seatOf(k.value.seat) ?? 0;
      b.flowers[s].push(...k.value.flowers);
      if (s === mine) {
        take(b.hand, k.value.flowers);
        b.hand.push(...k.value.replacements);
      }
      b.left = k.value.tilesLeft;
      b.caption = `${name(s)} shows ${k.value.flowers.length} flower${k.value.flowers.length === 1 ? "" : "s"}`;
      break;
    }
    case "tileDrawn": {
      const s = seatOf(k.value.seat);
      if (s === mine && k.value.tile) b.hand.push(k.value.tile);
      b.left = k.value.tilesLeft;
      b.caption = `${name(s)} draws${s === mine && k.value.tile ? ` ${tileLabel(k.value.tile)}` : ""}`;
      break;
    }
    case "tileDiscarded": {
      const s = seatOf(k.value.seat) ?? 0;
      b.discards[s].push(k.value.tile);
      if (s === mine) take(b.hand, [k.value.tile]);
      b.caption = `${name(s)} discards ${tileLabel(k.value.tile)}${k.value.declaredReady ? " and declares 敲" : ""}`;
      break;
    }
    case "meldDeclared": {
      const s = seatOf(k.value.seat) ?? 0;
      const m = k.value.meld!;
      if (m.kind === MeldKind.ADDED_KONG) {
        const i = b.melds[s].findIndex((x) => x.kind === MeldKind.PONG && x.tiles[0] === m.tiles[0]);
        if (i >= 0) b.melds[s].splice(i, 1);
      }
      b.melds[s].push(m);
      if (s === mine) take(b.hand, fromHand(m));
      const from = seatOf(m.fromSeat);
      if (CLAIMED.has(m.kind) && from !== null) {
        const pile = b.discards[from];
        if (pile[pile.length - 1] === m.claimedTile) pile.pop(); // claimed: it left the pile
      }
      b.caption = `${name(s)} declares a ${MeldKind[m.kind].toLowerCase().replace("_", " ")}`;
      break;
    }
    case "tilesSwapped": {
      const s = seatOf(k.value.seat);
      if (s === mine) {
        take(b.hand, k.value.buried);
        b.hand.push(...k.value.taken);
      }
      b.caption = `${name(s)} swaps ${k.value.count} tile${k.value.count === 1 ? "" : "s"} (换牌)`;
      break;
    }
    case "readyDeclared":
      b.caption = `${name(seatOf(k.value.seat))} declares 敲`;
      break;
    case "winDeclared":
      b.caption = `${name(seatOf(k.value.seat))} wins with ${tileLabel(k.value.tile)}`;
      break;
    case "handDrawn":
      b.caption = "the wall is exhausted: a drawn hand (荒)";
      break;
    case "handResult": {
      const escaped = seatOf(k.value.escapedSeat);
      if (escaped !== null) {
        b.caption = `${name(escaped)} ${escaped === mine ? "leave" : "leaves"} the hand (逃跑); a bot plays on`;
        break;
      }
      const mineNet = k.value.payments[mine] ?? 0n;
      b.caption = `the hand's result: you ${mineNet >= 0n ? "receive" : "pay"} ${mineNet >= 0n ? mineNet : -mineNet}`;
      break;
    }
    case "seedRevealed":
      b.caption = "the wall's seed is revealed";
      break;
    case "prompt":
      b.caption = "your decision";
      break;
    default:
      b.caption = k.case ?? "";
  }
  return b;
}

/** The boards after each event, in order. */
function boards(events: Event[], mine: number, name: (s: number | null) => string): Board[] {
  let b: Board = { hand: [], melds: [[], [], [], []], discards: [[], [], [], []], flowers: [[], [], [], []], left: 0, caption: "" };
  return events.map((e) => (b = step(b, e, mine, name)));
}

function seatBox(b: Board, s: number, mine: number, who: string): HTMLElement {
  const row = (cls: string, tiles: HTMLElement[]) => h("div", { class: cls }, ...tiles);
  return h(
    "div",
    { class: `replay-seat${s === mine ? " mine" : ""}`, "data-testid": "replay-seat", "data-seat": String(s) },
    h("div", { class: "who" }, who),
    row("flowers", b.flowers[s].map((t) => tileElement(t, "sm"))),
    row("melds", b.melds[s].map(meldElement)),
    row("discards", b.discards[s].map((t) => tileElement(t, "sm"))),
  );
}

export function replayPage(me: SignedIn, tableId: string, handId: string, back: () => void): void {
  const board = h("div", { class: "replay-board", "data-testid": "replay-board" }, "…");
  const caption = h("p", { class: "facts", "data-testid": "replay-step" });
  const controls = h("div", { class: "row replay-controls" });
  const page = h(
    "main",
    { class: "lobby replay" },
    h("div", { class: "card wide" }, h("div", { class: "row between" }, h("h2", {}, "牌谱 Replay"), button("History", "replay-back-to-history", back, "ghost")), caption, controls, board),
  );
  app.replaceChildren(page);
  void (async () => {
    try {
      const r = await gateway.getReplay({ sessionToken: me.sessionToken, tableId, handId });
      const mine = seatOf(r.seat) ?? 0;
      const name = (s: number | null) => (s === null ? "?" : s === mine ? "You" : r.displayNames[s] || `Seat ${s + 1}`);
      const all = boards(r.events, mine, name);
      let at = 0;
      const show = () => {
        const b = all[at];
        caption.textContent = `Step ${at + 1} / ${all.length} · ${b.caption} · ${b.left} tiles left`;
        caption.dataset.step = String(at + 1);
        const hand = h("div", { class: "hand", "data-testid": "replay-hand" }, ...[...b.hand].sort((x, y) => x - y).map((t) => {
          const tile = tileElement(t, "md");
          tile.setAttribute("data-testid", "replay-tile");
          return tile;
        }));
        board.replaceChildren(hand, ...[0, 1, 2, 3].map((s) => seatBox(b, s, mine, name(s)))); // the hand first: on screen on a phone
        prev.disabled = at === 0;
        next.disabled = at === all.length - 1;
      };
      const go = (to: number) => () => {
        at = Math.max(0, Math.min(all.length - 1, to));
        show();
      };
      const first = button("«", "replay-first", () => go(0)(), "ghost");
      const prev = button("◀ Back", "replay-prev", () => go(at - 1)());
      const next = button("Next ▶", "replay-next", () => go(at + 1)(), "primary");
      const last = button("»", "replay-last", () => go(all.length - 1)(), "ghost");
      controls.replaceChildren(first, prev, next, last);
      show();
    } catch (e) {
      board.textContent = "";
      banner(apiError(e), page);
    }
  })();
}

/** The hand a hand's ledger entry names: its ref, without the gateway's escape suffix (an escape
 * penalty is reported as "<hand id>/escape/<seat>"). */
export function handOfRef(ref: string): string {
  return ref.split("/escape/")[0];
}
