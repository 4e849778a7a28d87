// Back to your table from anywhere: the tables where the signed-in player sits now
// (matchmaking's ListLiveSeats, their own only) each with "Back to your table" — the seat's
// token from the gateway's JoinSeat with the player's session (the seat's earlier tokens stay
// valid, so another device or tab at the same seat goes on too), or a 加倍卡 to play for the
// table's next hand — and the tables this browser watched lately, to watch again.

import { apiError, gateway, matchmaking, requestId } from "./api";
import { banner, button, h, seatOf } from "./dom";
import { PRESET_NAMES } from "./labels";
import type { Seat } from "./saved";
import type { SignedIn } from "./session";

const WATCHED = "mahjong.watched";
const WATCHED_KEPT = 3;

export function watched(): string[] {
  try {
    const ids = JSON.parse(localStorage.getItem(WATCHED) ?? "[]") as unknown;
    return Array.isArray(ids) ? ids.filter((t): t is string => typeof t === "string").slice(0, WATCHED_KEPT) : [];
  } catch {
    return [];
  }
}

export function rememberWatched(tableId: string): void {
  localStorage.setItem(WATCHED, JSON.stringify([tableId, ...watched().filter((t) => t !== tableId)].slice(0, WATCHED_KEPT)));
}

function what(tag: string): string {
  if (tag.startsWith("room/")) return `room ${tag.slice(5)}`;
  if (tag.startsWith("tournament/")) return "tournament";
  if (tag.startsWith("quick")) return "quick match";
  return tag;
}

/** The seat's token by session (JoinSeat; no seat token needed: the session proves it). */
export async function backToSeat(me: SignedIn, tableId: string): Promise<Seat> {
  const r = await gateway.joinSeat({ requestId: requestId(), tableId, playerId: me.playerId, displayName: me.name, sessionToken: me.sessionToken });
  return { tableId, token: r.seatToken, seat: seatOf(r.seat), lastSeq: "0" };
}

/** 加倍卡 (RULES-items §2): the seat doubles the table's next hand — between hands or before
 * the first deal; the gateway says why not otherwise (a hand running, none left, too little
 * silver, not allowed at this table). */
async function playDouble(me: SignedIn, tableId: string, note: HTMLElement): Promise<void> {
  const seat = await backToSeat(me, tableId);
  const r = await gateway.playDoubleCard({ tableId, seatToken: seat.token, requestId: requestId() });
  note.textContent = `加倍卡 played: hand ${r.handNumber} is doubled (${r.doubleCardsLeft} left)`;
}

/** The card (filled once matchmaking answers; hidden when there is nothing to go back to). */
export function seatsCard(me: SignedIn | null, open: (s: Seat) => void, watch: (tableId: string) => void): HTMLElement {
  const list = h("div", { class: "seat-list" });
  const card = h("section", { class: "card wide seats", "data-testid": "your-tables", hidden: "" }, h("h2", {}, "Your tables"), list);
  const show = () => card.toggleAttribute("hidden", list.childElementCount === 0);
  for (const tableId of watched()) {
    list.append(
      h("div", { class: "seat-line" }, h("span", {}, `watched table ${tableId.slice(0, 10)}`), button("Watch again", "watch-again", () => watch(tableId), "ghost")),
    );
  }
  show();
  if (!me || me.guest) return card;
  void matchmaking
    .listLiveSeats({ sessionToken: me.sessionToken })
    .then((r) => {
      for (const s of r.seats) {
        const back = button("Back to your table", "back-to-table", () => {
          back.disabled = true;
          backToSeat(me, s.tableId)
            .then(open)
            .catch((e) => {
              back.disabled = false;
              banner(apiError(e), card);
            });
        }, "primary");
        back.dataset.table = s.tableId;
        const double = button("Play a 加倍卡", "play-double", () => {
          double.disabled = true;
          void playDouble(me, s.tableId, note)
            .catch((e) => banner(apiError(e), card))
            .finally(() => (double.disabled = false));
        }, "ghost");
        double.dataset.table = s.tableId;
        const note = h("small", { class: "note", "data-testid": "double-note" });
        const facts = `${what(s.tag)} · ${PRESET_NAMES[s.ruleset] ?? s.ruleset} · 底分 ${s.stake} · seat ${(seatOf(s.seat) ?? 0) + 1}`;
        const tournament = s.tag.startsWith("tournament/"); // never at a tournament table
        list.prepend(h("div", { class: "seat-line" }, h("span", {}, facts), h("div", { class: "row" }, tournament ? null : double, back), note));
      }
      show();
    })
    .catch((e) => {
      banner(apiError(e), card);
      card.removeAttribute("hidden");
    });
  return card;
}
