// The lobby: signing in (a name, through the development issuer, or as a guest), the player's
// account, and the ways to a table — back to the tables where the player sits (seats.ts), quick
// match (quick.ts), a private room by code (rooms.ts), one against three bots (a private room of
// matchmaking's for a signed-in player, a casual table on the gateway for a guest), a seat of a
// given table, or watching one — the shop (shop.ts) and the player's history (history.ts).

import { apiError, gateway, issuerUrl, matchmaking, protocol, requestId, type ApiError } from "./api";
import { app, banner, button, h, seatOf } from "./dom";
import { RULES } from "./labels";
import { saveSeat, type Seat } from "./saved";
import type { Player } from "./gen/mahjong/matchmaking/v1/matchmaking_pb";
import { historyPage } from "./history";
import { quickCard } from "./quick";
import { roomsCard } from "./rooms";
import { rememberWatched, seatsCard } from "./seats";
import { casualTable, Declined, roomTable } from "./seating";
import { current, live, signIn, signInAsGuest, signOut, type SignedIn } from "./session";
import { shopCard } from "./shop";
import { tournamentsCard } from "./tournaments";
import { TableScreen } from "./table";
import { tileElement } from "./tiles";

export function lobby(error?: ApiError): void {
  document.title = "上海敲麻 · Shanghai Mahjong";
  const me = current();
  const hands = h("select", { id: "hands" }, ...["1", "4", "8"].map((n) => h("option", { value: n }, `${n} hand${n === "1" ? "" : "s"}`)));
  hands.value = "4";
  const rules = h("select", { id: "rules" }, ...RULES.map((r) => h("option", { value: r.id }, r.label)));
  const tableId = h("input", { id: "join-table", placeholder: "table id" });
  const token = h("input", { id: "join-token", placeholder: "seat token (empty: an open seat)" });
  const watchId = h("input", { id: "watch-table", placeholder: "table id" });
  const status = h("div", { class: "status", "data-testid": "seating-status" });
  const create = button("Start a table", "create", () => void startTable(Number(hands.value), rules.value, status, create), "primary");
  if (!me) create.disabled = true;
  const player = me && !me.guest ? fetchPlayer() : Promise.resolve(undefined);
  const member = h("div", { class: "member-cards" });
  const page = h(
    "main",
    { class: "lobby" },
    h("h1", {}, "上海敲麻", h("small", {}, "Shanghai Mahjong")),
    // a hand laid out on the felt: the four winds, the three dragons, 一万 一筒 一条 and a flower
    h("div", { class: "deco felt-strip" }, ...[28, 29, 30, 31, 34, 33, 32, 1, 10, 19, 39].map((v) => tileElement(v, "lg"))),
    me ? account(me, player) : signInCard(),
    seatsCard(me, open, (t) => void watchTable(t)),
    member,
    h(
      "section",
      { class: "card" },
      h("h2", {}, "Play against three bots"),
      h("label", {}, "Length ", hands),
      h("label", {}, "Rules ", rules),
      create,
      h("small", { class: "note" }, !me ? "sign in first" : me.guest ? "a casual table (guests play bots only)" : "a private room: one 房卡, 底分 1"),
      status,
    ),
    h(
      "section",
      { class: "card" },
      h("h2", {}, "Join a table"),
      tableId,
      token,
      button("Take the seat", "join", () => void joinTable(tableId.value.trim(), token.value.trim())),
    ),
    h(
      "section",
      { class: "card" },
      h("h2", {}, "Watch a table"),
      watchId,
      button("Watch", "watch", () => void watchTable(watchId.value.trim())),
    ),
    h("p", { class: "foot" }, `gateway and matchmaking over ${protocol === "grpc-web" ? "gRPC-Web" : "Connect"}`),
  );
  app.replaceChildren(page);
  if (error) banner(error, page);
  if (me && !me.guest) {
    // the lobby again after a card's call, unless the page has left it meanwhile: a room's or
    // queue's table opened while the call was answered (a late answer must not cover the table)
    const again = () => {
      if (page.isConnected) lobby();
    };
    void player.then((p) => {
      if (!member.isConnected) return;
      member.replaceChildren(quickCard(me, p, open, again), roomsCard(me, p?.roomCode ?? "", p?.roomCards ?? 0, open, again), shopCard(me, Promise.resolve(p), again), tournamentsCard(me, open));
    });
  }
}

/** The signed-in player's account (GetPlayer), refreshed first if due; undefined on errors
 * (the account card shows them). */
let lastError: unknown = null;
async function fetchPlayer(): Promise<Player | undefined> {
  try {
    const s = await live();
    return s ? (await matchmaking.getPlayer({ sessionToken: s.sessionToken })).player : undefined;
  } catch (e) {
    lastError = e;
    return undefined;
  }
}

function signInCard(): HTMLElement {
  const name = h("input", { id: "name", value: localStorage.getItem("mahjong.name") ?? "", placeholder: "your name", maxlength: "32" });
  const go = async (guest: boolean) => {
    const display = name.value.trim();
    if (!guest && !display) return lobby({ code: "INVALID_ARGUMENT", reason: "", message: "a name signs in", fatal: false });
    try {
      await (guest ? signInAsGuest(display) : signIn(display));
      lobby();
    } catch (e) {
      lobby(apiError(e));
    }
  };
  name.addEventListener("keydown", (e) => {
    if (e.key === "Enter") void go(false);
  });
  return h(
    "section",
    { class: "card account" },
    h("h2", {}, "Sign in"),
    h("label", {}, "Name ", name),
    h(
      "div",
      { class: "row" },
      button("Sign in", "sign-in", () => void go(false), "primary"),
      button("Play as guest", "guest", () => void go(true), "ghost"),
    ),
    h("small", { class: "note" }, `development issuer ${issuerUrl}: the name is the identity, no password`),
  );
}

function account(me: SignedIn, player: Promise<Player | undefined>): HTMLElement {
  const facts = h("span", { class: "facts", "data-testid": "account" }, me.guest ? "guest · no silver, bot tables only" : "…");
  const card = h(
    "section",
    { class: "card account", "data-testid": "player" },
    h("h2", {}, "Playing as"),
    h("div", { class: "row" }, h("strong", { "data-testid": "player-name" }, me.name), facts),
    h(
      "div",
      { class: "row menu" },
      me.guest ? null : button("History", "history", () => historyPage(me, () => lobby()), "ghost"),
      button("Sign out", "sign-out", () => void signOut().then(() => lobby()), "ghost"),
    ),
  );
  if (!me.guest) {
    void player.then((p) => {
      if (p) facts.textContent = `${p.level?.name ?? ""} · ${p.silver} 银子 · ${p.roomCards} 房卡 · ${p.doubleCards} 加倍卡 · ${p.matchCards} 比赛卡`;
      else if (lastError) banner(apiError(lastError), card);
    });
  }
  return card;
}

async function startTable(maxHands: number, rulesId: string, status: HTMLElement, create: HTMLButtonElement): Promise<void> {
  const choice = RULES.find((r) => r.id === rulesId) ?? RULES[0];
  const rules = { name: choice.name, options: choice.options };
  create.disabled = true;
  try {
    const me = await live();
    if (!me) return lobby({ code: "UNAUTHENTICATED", reason: "SIGNED_OUT", message: "the session ended: sign in again", fatal: false });
    const seat = me.guest ? await casualTable(me, rules, maxHands) : await roomTable(me, rules, maxHands, (t) => (status.textContent = t));
    open(seat);
  } catch (e) {
    if (e instanceof Declined) {
      status.textContent = e.message;
      create.disabled = false;
      return;
    }
    lobby(apiError(e));
  }
}

// With a token (from matchmaking or a friend) the token is the seat: the table is opened with
// it and every call checks it. Without one, JoinSeat takes an open seat for the signed-in
// player (the session binds the seat to them).
async function joinTable(tableId: string, token: string): Promise<void> {
  if (token) {
    open({ tableId, token, seat: null, lastSeq: "0" });
    return;
  }
  try {
    const me = await live();
    if (!me) return lobby({ code: "UNAUTHENTICATED", reason: "SIGNED_OUT", message: "sign in to take an open seat", fatal: false });
    const r = await gateway.joinSeat({
      requestId: requestId(),
      tableId,
      playerId: me.playerId,
      displayName: me.name,
      sessionToken: me.guest ? "" : me.sessionToken,
    });
    open({ tableId, token: r.seatToken, seat: seatOf(r.seat), lastSeq: "0" });
  } catch (e) {
    lobby(apiError(e));
  }
}

export async function watchTable(tableId: string): Promise<void> {
  try {
    const r = await gateway.joinSeat({ requestId: requestId(), tableId, spectator: true });
    rememberWatched(tableId);
    open({ tableId, token: r.seatToken, seat: null, lastSeq: "0" });
  } catch (e) {
    lobby(apiError(e));
  }
}

export function open(seat: Seat): void {
  saveSeat(seat);
  history.replaceState(null, "", location.pathname + location.search.replace(/([?&])(table|token|watch)=[^&]*/g, "$1"));
  new TableScreen(seat, lobby).start();
}
