// Quick match (快速匹配): a queue per preset and stake tier (the tiers the player's level
// allows; the level's own by default). The ticket waits until matchmaking seats four (bots fill
// a queue that waits too long); WatchAssignments says when, and the page sits down.

import { TicketState, type Player } from "./gen/mahjong/matchmaking/v1/matchmaking_pb";
import { apiError, matchmaking, requestId } from "./api";
import { banner, button, h, seatOf } from "./dom";
import { RULES } from "./labels";
import type { Seat } from "./saved";
import { live, type SignedIn } from "./session";

const PRESETS = RULES.filter((r) => Object.keys(r.options).length === 0); // queues play presets

export function quickCard(me: SignedIn, player: Player | undefined, open: (s: Seat) => void, again: () => void): HTMLElement {
  const card = h("section", { class: "card quick", "data-testid": "quick-match" }, h("h2", {}, "快速匹配 Quick match"));
  const fail = (e: unknown) => banner(apiError(e), card);
  const status = h("div", { class: "status", "data-testid": "queue-status" });
  const ticketId = player?.queuedTicketId ?? "";
  if (ticketId) {
    card.append(
      status,
      button("Leave the queue", "leave-queue", () =>
        void matchmaking.leaveQueue({ sessionToken: me.sessionToken, ticketId, requestId: requestId() }).then(again, fail),
      "ghost"),
    );
    void watch(ticketId, status, open, again).catch(fail);
    return card;
  }
  const level = player?.level;
  const stakes = level?.allowedStakes.length ? level.allowedStakes : [];
  const preset = h("select", { id: "queue-rules" }, ...PRESETS.map((r) => h("option", { value: r.name }, r.label)));
  const stake = h("select", { id: "queue-stake" }, ...stakes.map((s) => h("option", { value: String(s) }, `底分 ${s}${s === level?.baseChips ? " (your level)" : ""}`)));
  if (level?.baseChips) stake.value = String(level.baseChips);
  const join = button("Find a table", "join-queue", () => {
    join.disabled = true;
    void matchmaking
      .joinQueue({ sessionToken: me.sessionToken, ruleset: { name: preset.value, options: {} }, stake: BigInt(stake.value || "0"), requestId: requestId() })
      .then(again, (e) => {
        join.disabled = false;
        fail(e);
      });
  }, "primary");
  if (!stakes.length) join.disabled = true;
  const fee = level?.feePerHand ? ` · 台费 ${level.feePerHand} per hand` : "";
  card.append(
    h("label", {}, "Rules ", preset),
    h("label", {}, "Stake ", stake),
    join,
    h("small", { class: "note" }, level ? `${level.name} ${level.englishName}${fee}` : "…"),
    status,
  );
  return card;
}

async function watch(ticketId: string, status: HTMLElement, open: (s: Seat) => void, again: () => void): Promise<void> {
  status.textContent = "waiting for players…";
  const s = await live();
  if (!s) return;
  for await (const r of matchmaking.watchAssignments({ sessionToken: s.sessionToken, ticketId })) {
    if (!status.isConnected) return;
    const t = r.ticket;
    if (!t) continue;
    if (t.state === TicketState.WAITING) status.textContent = `waiting for players… (${t.waitingInQueue} in the queue)`;
    else if (t.state === TicketState.MATCHED) status.textContent = "matched: making the table…";
    else if (t.state === TicketState.ASSIGNED && t.assignment?.seatToken) {
      const a = t.assignment;
      return open({ tableId: a.tableId, token: a.seatToken, seat: seatOf(a.seat), lastSeq: "0" });
    } else if (t.state === TicketState.CANCELLED) {
      status.textContent = t.failure ? `cancelled: ${t.failure}` : "cancelled";
      return again();
    }
  }
}
