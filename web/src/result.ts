// The end of a hand, read by a player: who won and how (the winning tile marked), what the
// viewer pays or gets and from whom, the scoring in words (Chinese and English, no codes or
// seat numbers), every revealed hand, the wall's seed and its check against the commitment, and
// who has pressed Next (the table deals the next hand once everyone has, or when its pause runs
// out: RULES §11 "Between hands").

import { EscapeReason, HandOutcome, TablePhase, type BreakdownItem, type Event, type HandResult, type SeedRevealed, type TableFinished, type TableView } from "./gen/mahjong/gateway/v1/gateway_pb";
import { button, h, seatOf } from "./dom";
import { HAND_TYPES, ITEM_NAMES, SEAT_ITEMS, transferText, WIN_KINDS, type Who } from "./labels";
import { meldElement } from "./pieces";
import { tileElement } from "./tiles";
import { verifyCommitment } from "./verify";

/** What the overlay needs of the table screen. */
export interface ResultHost {
  result: Event[]; // the last hand's hand_result, seed_revealed, table_finished
  resultShown: boolean; // "Next" pressed
  name(seat: number | null): string;
  who(seat: number): Who;
  readyForNext(): void;
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
  const me = seatOf(v.viewer ?? 0);
  const who = (s: number) => t.who(s);
  const winTiles = new Map(result.winners.map((w) => [seatOf(w.seat)!, w.winTile]));
  const title =
    result.outcome === HandOutcome.WIN
      ? h(
          "span",
          {},
          ...result.winners.map((w) => {
            const p = who(seatOf(w.seat)!);
            const tile = tileElement(w.winTile, "sm");
            tile.classList.add("win-tile");
            tile.setAttribute("data-testid", "title-win-tile");
            return h("span", { class: "winner" }, `${p.en} ${p.you ? "win" : "wins"} · ${HAND_TYPES[w.handType] ?? "胡"} · ${WIN_KINDS[w.winKind] ?? ""} `, tile, " ");
          }),
        )
      : result.outcome === HandOutcome.DRAW
        ? "流局 — a drawn hand: nobody pays"
        : "the hand ended: a player left";
  const net = me === null ? null : (result.payments[me] ?? 0n) - (result.fees[me] ?? 0n);
  const mine =
    net === null
      ? null
      : h("div", { class: `you-net ${net > 0n ? "pos" : net < 0n ? "neg" : ""}`, "data-testid": "you-net" }, net > 0n ? `你赢 You win ${net}` : net < 0n ? `你输 You lose ${-net}` : "你不输不赢 You neither win nor lose");
  const lines = readable(result, who);
  const breakdown = h(
    "table",
    { class: "breakdown", "data-testid": "breakdown" },
    h("tbody", {}, lines.length ? null : h("tr", {}, h("td", { colspan: "2" }, "nothing to pay")), ...lines.map((l) => h("tr", { class: l.cls }, h("td", {}, h("div", {}, l.zh), h("div", { class: "en" }, l.en)), h("td", { class: "num" }, l.amount)))),
  );
  const payments = h(
    "div",
    { class: "payments", "data-testid": "payments" },
    ...result.payments.map((p, i) => h("div", { class: `pay ${p > 0n ? "pos" : p < 0n ? "neg" : ""}${i === me ? " me" : ""}` }, h("span", {}, who(i).en), h("strong", {}, `${p > 0n ? "+" : ""}${p}`))),
    result.house ? h("div", { class: "pay" }, h("span", {}, "house 庄家"), h("strong", {}, String(result.house))) : null,
  );
  // 台费: the room service fee each seat paid the house, apart from the payments (RULES §9a).
  const fees = result.fees.some((f) => f > 0n)
    ? h(
        "div",
        { class: "payments fees", "data-testid": "fees" },
        h("span", { class: "who" }, "台费 room fee"),
        ...result.fees.map((f, i) => (f > 0n ? h("div", { class: "pay neg" }, h("span", {}, who(i).en), h("strong", {}, `-${f}`)) : null)),
      )
    : null;
  const revealed = h(
    "div",
    { class: "revealed", "data-testid": "revealed" },
    ...result.revealed.map((r) => {
      const seat = seatOf(r.seat)!;
      const win = winTiles.get(seat);
      const mark = (el: HTMLElement) => {
        el.classList.add("win-tile");
        el.setAttribute("data-testid", "win-tile");
        return el;
      };
      // the winning tile: in the hand after a self-draw, beside it after a discard (won on it)
      const at = win ? r.concealed.lastIndexOf(win) : -1;
      const tiles = r.concealed.map((x, i) => (i === at ? mark(tileElement(x, "sm")) : tileElement(x, "sm")));
      if (win && at < 0) tiles.push(mark(tileElement(win, "sm")));
      return h(
        "div",
        { class: "revealed-hand" },
        h("span", { class: "who" }, who(seat).en, win ? " 胡" : ""),
        h("span", { class: "tiles" }, ...tiles),
        h("span", { class: "melds" }, ...r.melds.map((m) => meldElement(m))),
        h("span", { class: "flowers" }, ...r.flowers.map((x) => tileElement(x, "sm"))),
      );
    }),
  );
  const verdict = h("span", { class: "verdict", "data-testid": "verify-result" });
  const seedBox = seed
    ? h(
        "details",
        { class: "seed", open: "" },
        h("summary", {}, "公平 The wall was fair: check it"),
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
  const played = finished ? `${finished.handsPlayed} ${finished.handsPlayed === 1 ? "hand" : "hands"} played` : "";
  const close = finished
    ? h(
        "div",
        { class: "final", "data-testid": "table-finished" },
        h("h3", {}, `牌局结束 The table is over · ${played}`),
        ...finished.chips.map((c, i) => h("div", { class: "pay" }, h("span", {}, who(i).en), h("strong", {}, `${c > 0n ? "+" : ""}${c}`))),
        button("New table", "new-table", () => t.newTable(), "primary"),
      )
    : nextBar(t, v);
  const body = h(
    "div",
    { class: "result", "data-testid": "result", role: "dialog", "aria-label": "the hand's result", "data-hand": String(t.result.find((e) => e.kind.case === "handResult")?.handNumber ?? 0) },
    h("h2", {}, title),
    mine,
    ...escapes.map((r) => escapeLine(r, who)),
    payments,
    fees,
    h("div", { class: "result-body" }, breakdown, h("div", { class: "result-side" }, revealed, seedBox)),
  );
  // the Next bar stays in view below the box's own scrolling
  return h("div", { class: "overlay" }, h("div", { class: "result-frame" }, body, close));
}

/** Next, with the pause's countdown and who is still looked at. */
function nextBar(t: ResultHost, v: TableView): HTMLElement {
  const between = v.phase === TablePhase.BETWEEN_HANDS;
  const waiting = between ? v.seats.map((s, i) => (s.nextReady ? null : i)).filter((i): i is number => i !== null) : [];
  const next = button("下一局 Next", "next-hand", () => t.readyForNext(), "primary");
  next.append(h("kbd", {}, "N"), h("span", { class: "next-countdown", "data-testid": "next-countdown" }, ""));
  return h(
    "div",
    { class: "next-bar" },
    next,
    h(
      "span",
      { class: "waiting", "data-testid": "next-waiting" },
      waiting.length ? `waiting for ${waiting.map((i) => (t.who(i).you ? "you" : t.who(i).en)).join(", ")}` : between ? "everyone is ready" : "",
    ),
  );
}

interface Line {
  zh: string;
  en: string;
  amount: string;
  cls: string;
}

/** The scoring as sentences from the viewer's side: transfers first ("You pay Bot 2 10"), then
 * what made the hand's value, each named by its code (no identifiers, no seat numbers). */
function readable(r: HandResult, who: (s: number) => Who): Line[] {
  const transfers: Line[] = [];
  const items: Line[] = [];
  for (const b of r.breakdown) {
    const seat = seatOf(b.seat);
    if (b.code === "TRANSFER" && seat !== null) {
      const payee = seatOf(b.otherSeat);
      const t = transferText(who(seat), payee === null ? null : who(payee), b.amount);
      transfers.push({ zh: t.zh, en: t.en, amount: "", cls: `transfer${who(seat).you ? " neg" : payee !== null && who(payee).you ? " pos" : ""}` });
      continue;
    }
    if (b.code === "ESCAPE_REASON") continue; // named in the escape's own line
    items.push(item(b, seat, who));
  }
  return [...transfers, ...items];
}

function item(b: BreakdownItem, seat: number | null, who: (s: number) => Who): Line {
  const named = ITEM_NAMES[b.code];
  // the gateway's label is "<中文> <english>: <detail>"; the detail has ids and seat numbers
  const [zh, en] = named ?? splitLabel(b.label);
  const whose = seat === null || SEAT_ITEMS.has(b.code) ? null : who(seat);
  if (SEAT_ITEMS.has(b.code)) {
    const next = who(Number(b.amount));
    return { zh: `${zh}: ${next.zh}`, en: `${en}: ${next.en}`, amount: "", cls: "" };
  }
  const unit = named?.[2] ?? "";
  return {
    zh: whose ? `${whose.zh} · ${zh}` : zh,
    en: whose ? `${whose.en} · ${en}` : en,
    amount: unit === "×" ? `×${b.amount}` : `${b.amount}${unit && unit !== "pts" && unit !== "chips" ? ` ${unit}` : ""}`,
    cls: "",
  };
}

function splitLabel(label: string): [string, string] {
  const head = label.split(":")[0].trim();
  const space = head.indexOf(" ");
  return space > 0 ? [head.slice(0, space), head.slice(space + 1)] : [head, head];
}

/** One line per escape: who, why (left, or 掉线: disconnected past the grace) and the penalty. */
function escapeLine(r: HandResult, who: (s: number) => Who): HTMLElement {
  const seat = seatOf(r.escapedSeat);
  const p = seat === null ? null : who(seat);
  const penalty = seat === null ? 0n : -(r.payments[seat] ?? 0n);
  const why = r.escapeReason === EscapeReason.DISCONNECTED ? "掉线: disconnected and not back by the hand's end" : "逃跑: left the table";
  const pays = p?.you ? `you pay ${penalty}` : `pays ${penalty}`;
  return h("div", { class: "escape", "data-testid": "escape-reason" }, `${p ? p.en : "a player"} — ${why} — ${pays} (${r.house} of it to the house)`);
}
