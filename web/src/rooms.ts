// Private rooms (开房): open one (a 房卡; with none left, one bought only after the price is
// confirmed), share its code and a link that opens it (?room=CODE), join one by code; in the
// room the owner sets 底分 and invites bots, every person accepts the stake and presses Start;
// once the table is made the room answers each seat (its Assignment) and the page sits down.

import { Asset, RoomState, type Room } from "./gen/mahjong/matchmaking/v1/matchmaking_pb";
import { apiError, matchmaking, requestId } from "./api";
import { banner, button, h } from "./dom";
import { buyConfirmed } from "./items";
import { RULES } from "./labels";
import type { Seat } from "./saved";
import { seatOf } from "./seating";
import { live, type SignedIn } from "./session";

const POLL_MS = 700;
/** Rooms this page saw before their table was made: it sits down once the table is. */
const waiting = new Set<string>();

/** The code a link asked for (?room=CODE), upper-cased; "" when none. */
export function linkedRoom(): string {
  return (new URLSearchParams(location.search).get("room") ?? "").trim().toUpperCase();
}

export function roomLink(code: string): string {
  return `${location.origin}${location.pathname}?room=${encodeURIComponent(code)}`;
}

function forgetLink(): void {
  if (linkedRoom()) history.replaceState(null, "", location.pathname + location.search.replace(/([?&])room=[^&]*&?/, "$1").replace(/[?&]$/, ""));
}

/** The rooms card: the room the player is in (``code``), else open or join one. */
export function roomsCard(me: SignedIn, code: string, roomCards: number, open: (s: Seat) => void, again: () => void): HTMLElement {
  const card = h("section", { class: "card wide room", "data-testid": "room" });
  const fail = (e: unknown) => banner(apiError(e), card);
  const act = (f: () => Promise<unknown>) => () => void f().then(again, fail);
  if (!code) {
    const rules = h("select", { id: "room-rules" }, ...RULES.map((r) => h("option", { value: r.id }, r.label)));
    const hands = h("select", { id: "room-hands" }, ...["1", "4", "8"].map((n) => h("option", { value: n }, `${n} hand${n === "1" ? "" : "s"}`)));
    hands.value = "4";
    const joinCode = h("input", { id: "room-code", placeholder: "room code", value: linkedRoom(), maxlength: "12", autocapitalize: "characters" });
    const openIt = async () => {
      if (roomCards === 0 && !(await buyConfirmed(me.sessionToken, Asset.ROOM_CARD, 1, "Opening a room takes one 房卡 and you have none. "))) return;
      const choice = RULES.find((r) => r.id === rules.value) ?? RULES[0];
      await matchmaking.openRoom({ sessionToken: me.sessionToken, ruleset: { name: choice.name, options: choice.options }, maxHands: Number(hands.value), requestId: requestId() });
    };
    const joinIt = async () => {
      await matchmaking.joinRoom({ sessionToken: me.sessionToken, code: joinCode.value.trim().toUpperCase(), requestId: requestId() });
      forgetLink();
    };
    card.append(
      h("h2", {}, "开房 Private room"),
      h("label", {}, "Rules ", rules),
      h("label", {}, "Length ", hands),
      button(roomCards > 0 ? `Open a room · 1 房卡 (${roomCards} held)` : "Open a room · buy a 房卡", "open-room", act(openIt), "primary"),
      h("div", { class: "row" }, joinCode, button("Join by code", "join-room", act(joinIt))),
    );
    if (linkedRoom()) void joinIt().then(again, fail); // the link opened the page: join at once
    return card;
  }
  const body = h("div", { class: "room-body" }, "…");
  card.append(h("h2", {}, "Room ", h("code", { "data-testid": "room-code" }, code)), body);
  let shown = "";
  const draw = (room: Room) => {
    const seat = seatOf(room);
    if (seat && waiting.delete(code)) return open(seat);
    if (seat) {
      // the room plays already (the player came back to the lobby): back on their say
      if (shown !== "playing") body.replaceChildren(h("p", {}, "The room's table is playing."), button("Back to your table", "room-back", () => open(seat), "primary"));
      shown = "playing";
      return;
    }
    waiting.add(code);
    if (room.state === RoomState.FINISHED || room.state === RoomState.CLOSED) return again();
    const key = JSON.stringify([room.state, room.stake.toString(), room.members.map((m) => [m.playerId, m.accepted, m.ready])]);
    if (key === shown) return;
    shown = key;
    body.replaceChildren(...roomBody(me, room, act));
  };
  const poll = async () => {
    while (card.isConnected || !shown) {
      const s = await live();
      if (!s) return;
      try {
        const r = await matchmaking.getRoom({ sessionToken: s.sessionToken, code });
        if (r.room) draw(r.room);
      } catch (e) {
        fail(e);
        if (apiError(e).fatal) return;
      }
      await new Promise((ok) => setTimeout(ok, POLL_MS));
    }
  };
  void poll();
  return card;
}

function roomBody(me: SignedIn, room: Room, act: (f: () => Promise<unknown>) => () => void): HTMLElement[] {
  const t = me.sessionToken;
  const code = room.code;
  const owner = room.ownerPlayerId === me.playerId;
  const mine = room.members.find((m) => m.playerId === me.playerId);
  const link = h("input", { readonly: "", value: roomLink(code), "data-testid": "room-link", class: "link" });
  const out: HTMLElement[] = [
    h(
      "div",
      { class: "row" },
      link,
      button("Copy link", "copy-link", () => {
        link.select();
        void navigator.clipboard?.writeText(link.value).catch(() => document.execCommand("copy"));
      }, "ghost"),
    ),
    h(
      "ol",
      { class: "members", "data-testid": "room-members" },
      ...room.members.map((m) =>
        h("li", {}, m.displayName + (m.bot ? " (bot)" : ""), h("small", {}, [m.playerId === room.ownerPlayerId ? "host" : "", m.accepted ? "底分 ✓" : "", m.ready ? "ready" : ""].filter(Boolean).join(" · "))),
      ),
    ),
    h("p", { "data-testid": "room-stake" }, room.stake > 0n ? `底分 ${room.stake} per point` : "底分 not set yet"),
  ];
  const buttons = h("div", { class: "row" });
  if (owner) {
    const stake = h("input", { type: "number", min: "1", value: String(room.stake || 1n), id: "room-stake", class: "short" });
    buttons.append(stake, button("Set 底分", "set-stake", act(() => matchmaking.setRoomStake({ sessionToken: t, code, stake: BigInt(Number(stake.value) || 1), requestId: requestId() }))));
    if (room.members.length < 4) buttons.append(button("Invite a bot", "invite-bot", act(() => matchmaking.inviteBot({ sessionToken: t, code, requestId: requestId() }))));
  } else if (room.stake > 0n && mine && !mine.accepted) {
    buttons.append(
      button(`Accept 底分 ${room.stake}`, "accept-stake", act(() => matchmaking.answerRoomStake({ sessionToken: t, code, accept: true, requestId: requestId() })), "primary"),
      button("Refuse", "refuse-stake", act(() => matchmaking.answerRoomStake({ sessionToken: t, code, accept: false, requestId: requestId() })), "ghost"),
    );
  }
  if (mine && !mine.ready && room.stake > 0n) buttons.append(button("Start", "room-start", act(() => matchmaking.pressStart({ sessionToken: t, code, requestId: requestId() })), "primary"));
  if (room.state === RoomState.STARTING) buttons.append(h("span", { class: "status" }, "making the table…"));
  buttons.append(button("Leave room", "leave-room", act(() => matchmaking.leaveRoom({ sessionToken: t, code, requestId: requestId() })), "ghost"));
  out.push(buttons);
  return out;
}
