// The player's history (账单): every change of any balance — silver, 房卡, 加倍卡, 比赛卡 —
// one line each, newest first, from matchmaking's ListLedgerEntries (the session's own entries
// only), a page at a time. A hand's line opens its replay (牌谱, replay.ts).

import { LedgerEntryKind, type LedgerEntry } from "./gen/mahjong/matchmaking/v1/matchmaking_pb";
import { apiError, matchmaking } from "./api";
import { app, banner, button, h } from "./dom";
import { itemName } from "./items";
import { handOfRef, replayPage } from "./replay";
import type { SignedIn } from "./session";

const PAGE = 50;

const KINDS: Record<number, string> = {
  [LedgerEntryKind.GRANT]: "welcome grant",
  [LedgerEntryKind.HAND]: "a hand's payment",
  [LedgerEntryKind.ESCAPE_PENALTY]: "left a hand (逃跑 penalty)",
  [LedgerEntryKind.HOUSE_SHARE]: "house share",
  [LedgerEntryKind.PURCHASE]: "shop purchase",
  [LedgerEntryKind.OPERATOR_GRANT]: "granted by the operator",
  [LedgerEntryKind.ENTRY_FEE]: "tournament entry",
  [LedgerEntryKind.REFUND]: "tournament refund",
  [LedgerEntryKind.PRIZE]: "tournament prize",
  [LedgerEntryKind.ROOM_CARD]: "房卡 spent opening a room",
  [LedgerEntryKind.DOUBLE_CARD]: "加倍卡 played",
  [LedgerEntryKind.BOT_SIDE]: "bot seat",
  [LedgerEntryKind.ROOM_FEE]: "room fee (台费)",
};

function where(tag: string): string {
  if (tag.startsWith("room/")) return `room ${tag.slice(5)}`;
  if (tag.startsWith("tournament/")) return "tournament";
  if (tag.startsWith("quick")) return "quick match";
  return tag;
}

function line(e: LedgerEntry, replay: (tableId: string, handId: string) => void): HTMLElement {
  const when = new Date(Number(e.recordedAtUnixMs));
  const amount = `${e.amount > 0n ? "+" : ""}${e.amount} ${itemName(e.asset)}`;
  return h(
    "li",
    { class: `entry ${e.amount < 0n ? "out" : "in"}`, "data-testid": "ledger-entry" },
    h("span", { class: "amount" }, amount),
    h("span", { class: "why" }, [KINDS[e.kind] ?? "", e.note, e.tag ? where(e.tag) : ""].filter(Boolean).join(" · ")),
    h("time", { datetime: when.toISOString() }, when.toLocaleString()),
    e.tableId ? button("Replay", "replay", () => replay(e.tableId, handOfRef(e.ref)), "ghost") : null,
  );
}

export function historyPage(me: SignedIn, back: () => void): void {
  const list = h("ol", { class: "ledger", "data-testid": "ledger" });
  const facts = h("p", { class: "facts", "data-testid": "history-balances" }, "…");
  const more = button("More", "ledger-more", () => void load(), "ghost");
  more.hidden = true;
  const page = h(
    "main",
    { class: "lobby history" },
    h("div", { class: "card wide" }, h("div", { class: "row between" }, h("h2", {}, "账单 History"), button("Lobby", "history-back", back, "ghost")), facts, list, more),
  );
  let token = "";
  const load = async () => {
    try {
      const r = await matchmaking.listLedgerEntries({ sessionToken: me.sessionToken, pageSize: PAGE, pageToken: token });
      facts.textContent = r.balances.map((b) => `${b.amount} ${itemName(b.asset)}`).join(" · ");
      const replay = (tableId: string, handId: string) => replayPage(me, tableId, handId, () => historyPage(me, back));
      list.append(...r.entries.map((e) => line(e, replay)));
      token = r.nextPageToken;
      more.hidden = !token;
    } catch (e) {
      banner(apiError(e), page);
    }
  };
  app.replaceChildren(page);
  void load();
}
