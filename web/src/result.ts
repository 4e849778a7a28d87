// The end of a hand: who won and how, the payments, the scoring breakdown, every revealed
// hand, the wall's seed and its check against the commitment, and the table's final chips.

import { EscapeReason, HandOutcome, type Event, type HandResult, type SeedRevealed, type TableFinished, type TableView } from "./gen/mahjong/gateway/v1/gateway_pb";
import { button, h, seatOf } from "./dom";
import { HAND_TYPES, WIN_KINDS } from "./labels";
import { meldElement } from "./pieces";
import { tileElement } from "./tiles";
import { verifyCommitment } from "./verify";

/** What the overlay needs of the table screen. */
export interface ResultHost {
  result: Event[]; // the last hand's hand_result, seed_revealed, table_finished
  resultShown: boolean; // "Next hand" pressed
  name(seat: number | null): string;
  render(): void;
  newTable(): void;
}

export function resultOverlay(t: ResultHost, v: TableView): HTMLElement | null {
  const results = t.result.filter((e) => e.kind.case === "handResult").map((e) => e.kind.value as HandResult);
  // The hand's own result first; escapes (a Leave, or 掉线 at the hand's end) are named below it.
  const result = results.find((r) => r.outcome !== HandOutcome.ESCAPE) ?? results[0];
  const escapes = results.filter((r) => r.outcome === HandOutcome.ESCAPE);
  const seed = t.result.find((e) => e.kind.case === "seedRevealed")?.kind.value as SeedRevealed | undefined;
  const finished = t.result.find((e) => e.kind.case === "tableFinished")?.kind.value as TableFinished | undefined;
  if (!result || t.resultShown) return null;
  const names = (s: number) => t.name(s);
  const title =
    result.outcome === HandOutcome.WIN
      ? result.winners.map((w) => `${names(seatOf(w.seat)!)} wins · ${HAND_TYPES[w.handType] ?? "胡"} · ${WIN_KINDS[w.winKind] ?? ""}`).join(" / ")
      : result.outcome === HandOutcome.DRAW
        ? "流局 — a drawn hand"
        : "the hand ended: a player left";
  const breakdown = h(
    "table",
    { class: "breakdown", "data-testid": "breakdown" },
    h("thead", {}, h("tr", {}, h("th", {}, "seat"), h("th", {}, "item"), h("th", {}, "amount"))),
    h("tbody", {}, result.breakdown.length ? null : h("tr", {}, h("td", { colspan: "3" }, "no scoring items")), ...result.breakdown.map((b) => h("tr", {}, h("td", {}, seatOf(b.seat) === null ? "" : names(seatOf(b.seat)!)), h("td", {}, b.label), h("td", { class: "num" }, String(b.amount))))),
  );
  const payments = h(
    "div",
    { class: "payments", "data-testid": "payments" },
    ...result.payments.map((p, i) => h("div", { class: `pay ${p > 0n ? "pos" : p < 0n ? "neg" : ""}` }, h("span", {}, names(i)), h("strong", {}, `${p > 0n ? "+" : ""}${p}`))),
    result.house ? h("div", { class: "pay" }, h("span", {}, "house"), h("strong", {}, String(result.house))) : null,
  );
  // 台费: the room service fee each seat paid the house, apart from the payments (RULES §9a).
  const fees = result.fees.some((f) => f > 0n)
    ? h(
        "div",
        { class: "payments fees", "data-testid": "fees" },
        h("span", { class: "who" }, "台费 room fee"),
        ...result.fees.map((f, i) => (f > 0n ? h("div", { class: "pay neg" }, h("span", {}, names(i)), h("strong", {}, `-${f}`)) : null)),
      )
    : null;
  const revealed = h(
    "div",
    { class: "revealed", "data-testid": "revealed" },
    ...result.revealed.map((r) =>
      h(
        "div",
        { class: "revealed-hand" },
        h("span", { class: "who" }, names(seatOf(r.seat)!)),
        h("span", { class: "tiles" }, ...r.concealed.map((t) => tileElement(t, "sm"))),
        h("span", { class: "melds" }, ...r.melds.map((m) => meldElement(m))),
        h("span", { class: "flowers" }, ...r.flowers.map((t) => tileElement(t, "sm"))),
      ),
    ),
  );
  const verdict = h("span", { class: "verdict", "data-testid": "verify-result" });
  const seedBox = seed
    ? h(
        "div",
        { class: "seed" },
        h("div", {}, "seed ", h("code", { "data-testid": "seed" }, seed.seed)),
        h("div", {}, "commitment ", h("code", {}, seed.commitment)),
        button("Verify the wall", "verify", async () => {
          const r = await verifyCommitment(seed.seed, v.hand?.commitment || seed.commitment);
          verdict.textContent = r.ok ? "✓ SHA-256(seed) equals the commitment shown when the hand began" : `✗ mismatch: SHA-256(seed) = ${r.digest}`;
          verdict.className = `verdict ${r.ok ? "ok" : "bad"}`;
        }),
        verdict,
      )
    : h("div", { class: "seed" }, "the seed is revealed once the wall is closed…");
  const close = finished
    ? h(
        "div",
        { class: "final", "data-testid": "table-finished" },
        h("h3", {}, `Table finished after ${finished.handsPlayed} hands`),
        ...finished.chips.map((c, i) => h("div", { class: "pay" }, h("span", {}, names(i)), h("strong", {}, `${c > 0n ? "+" : ""}${c}`))),
        button("New table", "new-table", () => t.newTable(), "primary"),
      )
    : button("Next hand", "next-hand", () => {
        t.resultShown = true;
        t.render();
      }, "primary");
  return h(
    "div",
    { class: "overlay" },
    h(
      "div",
      { class: "result", "data-testid": "result" },
      h("h2", {}, title),
      ...escapes.map((r) => escapeLine(r, names)),
      payments,
      fees,
      h("div", { class: "result-body" }, breakdown, h("div", { class: "result-side" }, revealed, seedBox)),
      close,
    ),
  );
}

/** One line per escape: who, why (left, or 掉线: disconnected past the grace) and the penalty. */
function escapeLine(r: HandResult, names: (s: number) => string): HTMLElement {
  const seat = seatOf(r.escapedSeat);
  const who = seat === null ? "a player" : names(seat);
  const penalty = seat === null ? 0n : -(r.payments[seat] ?? 0n);
  const why = r.escapeReason === EscapeReason.DISCONNECTED ? "掉线: disconnected and not back by the hand's end" : "逃跑: left the table";
  return h("div", { class: "escape", "data-testid": "escape-reason" }, `${who} — ${why} — pays ${penalty} (${r.house} to the house)`);
}
