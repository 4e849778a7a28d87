// Tournaments (比赛): create one (its rounds, hands a round, entry, bots), share its id and a
// link that opens it (?tournament=ID), join or leave it, watch its standings live
// (WatchTournament), and sit down when a round seats the player (its Assignment). The list is
// matchmaking's ListTournaments (every open or running tournament, newest first), beside the
// ones this browser created, joined or opened by link.

import { TournamentState, type Tournament, type TournamentSummary, type WatchTournamentResponse } from "./gen/mahjong/matchmaking/v1/matchmaking_pb";
import { apiError, matchmaking, requestId } from "./api";
import { banner, button, h, seatOf } from "./dom";
import type { Seat } from "./saved";
import { live, type SignedIn } from "./session";

const KEPT = "mahjong.tournaments";
const STATES: Record<number, string> = {
  [TournamentState.REGISTERING]: "registering",
  [TournamentState.RUNNING]: "running",
  [TournamentState.FINISHED]: "finished",
  [TournamentState.STALLED]: "stalled",
};

function kept(): string[] {
  try {
    const ids = JSON.parse(localStorage.getItem(KEPT) ?? "[]") as unknown;
    return Array.isArray(ids) ? ids.filter((t): t is string => typeof t === "string").slice(0, 5) : [];
  } catch {
    return [];
  }
}

function keep(id: string): void {
  localStorage.setItem(KEPT, JSON.stringify([id, ...kept().filter((t) => t !== id)].slice(0, 5)));
}

/** Whether this tab sat at ``tableId`` already (a round's table is opened once: after it the
 * lobby waits for the next round's); notes it. */
function sat(tableId: string): boolean {
  const key = "mahjong.tournament-tables";
  const seen = (sessionStorage.getItem(key) ?? "").split(" ");
  if (seen.includes(tableId)) return true;
  sessionStorage.setItem(key, [...seen.slice(-20), tableId].join(" ").trim());
  return false;
}

export function tournamentLink(id: string): string {
  return `${location.origin}${location.pathname}?tournament=${encodeURIComponent(id)}`;
}

/** One line of the public list: name, state, entrants, when it started (or was created). */
function summaryLine(t: TournamentSummary, show: (id: string) => void): HTMLElement {
  const started = Number(t.startedAtUnixMs);
  const when = started ? `started ${new Date(started).toLocaleTimeString()}` : `created ${new Date(Number(t.createdAtUnixMs)).toLocaleTimeString()}`;
  const round = t.currentRound ? ` · round ${t.currentRound}/${t.rounds}` : ` · ${t.rounds} round${t.rounds === 1 ? "" : "s"}`;
  return h(
    "div",
    { class: "seat-line", "data-testid": "listed-tournament", "data-id": t.tournamentId },
    h("span", {}, `${t.name} · ${STATES[t.state] ?? ""} · ${t.entrantCount} entered${round} · ${when}`),
    button("Open", "open-listed", () => show(t.tournamentId), "ghost"),
  );
}

/** The open and running tournaments (ListTournaments), refreshed on demand. */
function listed(me: SignedIn, show: (id: string) => void, fail: (e: unknown) => void): HTMLElement {
  const list = h("div", { class: "seat-list", "data-testid": "tournament-list" });
  const load = () =>
    void matchmaking.listTournaments({ sessionToken: me.sessionToken }).then((r) => {
      list.replaceChildren(...r.tournaments.map((t) => summaryLine(t, show)));
      if (!r.tournaments.length) list.append(h("p", { class: "facts" }, "No tournament is open now."));
    }, fail);
  load();
  return h("div", {}, h("div", { class: "row between" }, h("h3", {}, "Open and running"), button("Refresh", "refresh-tournaments", load, "ghost")), list);
}

/** The lobby's card: create or open one, the public list and the kept ones to open. */
export function tournamentsCard(me: SignedIn, open: (s: Seat) => void): HTMLElement {
  const card = h("section", { class: "card wide tournaments", "data-testid": "tournaments" }, h("h2", {}, "比赛 Tournaments"));
  const fail = (e: unknown) => banner(apiError(e), card);
  const view = h("div", { class: "tournament-view" });
  const show = (id: string) => {
    keep(id);
    view.replaceChildren(tournamentView(me, id, open, fail));
  };
  const rounds = h("select", { id: "t-rounds" }, ...["1", "2", "3"].map((n) => h("option", { value: n }, `${n} round${n === "1" ? "" : "s"}`)));
  const hands = h("select", { id: "t-hands" }, ...["1", "2", "4"].map((n) => h("option", { value: n }, `${n} hand${n === "1" ? "" : "s"} a round`)));
  const bots = h("select", { id: "t-bots" }, ...["0", "3", "7"].map((n) => h("option", { value: n }, `${n} bots`)));
  bots.value = "3";
  const create = button("Create a tournament", "create-tournament", () => {
    void matchmaking
      .createTournament({
        sessionToken: me.sessionToken,
        name: `${me.name}'s cup`,
        ruleset: { name: "shanghai-qiaoma", options: {} },
        stake: 1n,
        rounds: Number(rounds.value),
        handsPerRound: Number(hands.value),
        bots: Number(bots.value),
        requestId: requestId(),
      })
      .then((r) => show(r.tournament!.tournamentId), fail);
  }, "primary");
  const id = h("input", { id: "t-id", placeholder: "tournament id", value: new URLSearchParams(location.search).get("tournament") ?? "" });
  card.append(
    h("div", { class: "row" }, rounds, hands, bots, create),
    h("div", { class: "row" }, id, button("Open", "open-tournament", () => id.value.trim() && show(id.value.trim()))),
    listed(me, show, fail),
    h("div", { class: "row" }, ...kept().map((t) => button(t.slice(0, 12), "kept-tournament", () => show(t), "ghost"))),
    view,
  );
  const latest = id.value.trim() || kept()[0];
  if (latest) show(latest); // the linked one, else the last opened: its next round seats the player
  return card;
}

function tournamentView(me: SignedIn, id: string, open: (s: Seat) => void, fail: (e: unknown) => void): HTMLElement {
  const box = h("div", { class: "tournament", "data-testid": "tournament" }, "…");
  const draw = (r: WatchTournamentResponse) => {
    const t = r.tournament;
    if (!t) return;
    const a = r.assignment;
    if (a?.tableId && a.seatToken && !sat(a.tableId) && t.state === TournamentState.RUNNING) {
      return open({ tableId: a.tableId, token: a.seatToken, seat: seatOf(a.seat), lastSeq: "0" });
    }
    box.replaceChildren(...body(me, t, fail));
  };
  const watch = async () => {
    const s = await live();
    if (!s) return;
    try {
      const first = await matchmaking.getTournament({ sessionToken: s.sessionToken, tournamentId: id });
      draw(first as unknown as WatchTournamentResponse);
      for await (const r of matchmaking.watchTournament({ sessionToken: s.sessionToken, tournamentId: id })) {
        if (!box.isConnected) return;
        draw(r);
      }
    } catch (e) {
      if (box.isConnected) fail(e);
    }
  };
  void watch();
  return box;
}

function body(me: SignedIn, t: Tournament, fail: (e: unknown) => void): HTMLElement[] {
  const id = t.tournamentId;
  const entered = t.entrants.some((e) => e.playerId === me.playerId);
  const creator = t.creatorPlayerId === me.playerId;
  const act = (f: () => Promise<unknown>) => () => void f().catch(fail);
  const s = me.sessionToken;
  const buttons = h("div", { class: "row" });
  if (t.state === TournamentState.REGISTERING) {
    if (!entered) buttons.append(button("Join", "join-tournament", act(() => matchmaking.joinTournament({ sessionToken: s, tournamentId: id, requestId: requestId() })), "primary"));
    else buttons.append(button("Leave", "leave-tournament", act(() => matchmaking.leaveTournament({ sessionToken: s, tournamentId: id, requestId: requestId() })), "ghost"));
    if (creator) {
      buttons.append(button("Add a bot", "tournament-bot", act(() => matchmaking.addTournamentBots({ sessionToken: s, tournamentId: id, count: 1, requestId: requestId() }))));
      buttons.append(button("Start", "start-tournament", act(() => matchmaking.startTournament({ sessionToken: s, tournamentId: id, requestId: requestId() })), "primary"));
    }
  }
  const final = t.finalRanking.length > 0;
  const last = final ? t.finalRanking : (t.standings.at(-1)?.standings ?? []);
  const caption = final ? "最终排名 Final ranking" : `Standings after round ${t.standings.at(-1)?.round ?? 0}`;
  const entry = t.entrySilver > 0n || t.entryMatchCards > 0 ? ` · entry ${t.entrySilver} 银子 ${t.entryMatchCards} 比赛卡` : "";
  return [
    h("h3", {}, t.name, " ", h("small", { "data-testid": "tournament-state" }, STATES[t.state] ?? "")),
    h("p", {}, `${t.rounds} rounds of ${t.handsPerRound} hands · 底分 ${t.stake}${entry} · round ${t.currentRound} · ${t.entrantCount} entered`),
    h("div", { class: "row" }, h("input", { readonly: "", class: "link", value: tournamentLink(id), "data-testid": "tournament-link" })),
    h("ol", { class: "entrants", "data-testid": "entrants" }, ...t.entrants.map((e) => h("li", {}, e.displayName + (e.bot ? " (bot)" : "")))),
    last.length
      ? h(
          "table",
          { class: "standings", "data-testid": final ? "final-ranking" : "standings" },
          h("caption", {}, caption),
          ...last.map((x) => h("tr", { "data-testid": "ranked", "data-player": x.playerId }, h("td", {}, String(x.rank)), h("td", {}, x.displayName + (x.bot ? " (bot)" : "")), h("td", {}, `${x.chips > 0n ? "+" : ""}${x.chips}`))),
        )
      : h("span", {}),
    buttons,
  ];
}
