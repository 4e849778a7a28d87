// The table screen: the person's seat (or a spectator's) at a live table, driven by the
// gateway's view (the truth: GetTableState on arrival, then the one each batch of the event
// stream carries) and its event stream (Subscribe, resumed from the last event seen), with the
// actions the person clicks (Act) and the table's log. The felt, the hand and the result are
// drawn by felt.ts, prompts.ts and result.ts.

import { create } from "@bufbuild/protobuf";
import { ActionSchema, TablePhase, type Action, type Event, type TableView } from "./gen/mahjong/gateway/v1/gateway_pb";
import { apiError, gateway, hedged, requestId, watched, type ApiError } from "./api";
import { app, banner, button, h, seatOf } from "./dom";
import { center, POSITIONS, seatZone } from "./felt";
import { meldName, PRESET_NAMES, WIN_KINDS, type Who } from "./labels";
import { handSection, type ActionKind, type PromptHost } from "./prompts";
import { keyAction } from "./keys";
import { resultOverlay, type ResultHost } from "./result";
import { forgetSeat, loadResult, saveResult, saveSeat, type Seat } from "./saved";
import { tileLabel, tilesText } from "./tiles";

// A replay comes in messages of at most this many events, only the last of them with the view
// (the gateway's MAX_EVENTS_PER_MESSAGE): a full message without one is not the batch's end.
const MAX_EVENTS_PER_MESSAGE = 64;
// Next does nothing this long after a result comes up (see readyForNext).
const GUARD_MS = 700;

export class TableScreen implements PromptHost, ResultHost {
  view: TableView | null = null;
  private lastSeq: bigint;
  result: Event[];
  resultShown = false;
  ready = false; // 敲 chosen: the next discard declares ready
  swap = new Set<number>(); // indexes of concealed tiles picked to bury (换牌)
  hint: { action: Action; plan: string } | null = null; // for the pending prompt
  private log: string[] = [];
  private refreshing: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private acting = false;
  private confirmingLeave = false; // "Leave table" mid-hand: the penalty is named first
  cursor: number | null = null; // the hand's tile under the keyboard's cursor (arrow keys)
  private resultSince = 0; // when the last hand's result came (Date.now())
  private root = h("main", { class: "table-screen" });

  constructor(
    private seat: Seat,
    private lobby: (error?: ApiError) => void,
  ) {
    this.lastSeq = BigInt(seat.lastSeq || "0");
    this.log = seat.log ?? [];
    this.result = loadResult(seat.tableId);
  }

  start(): void {
    app.replaceChildren(this.root);
    this.root.append(h("div", { class: "loading" }, "joining the table…"));
    void this.refresh().then(() => void this.follow());
    setInterval(() => this.tick(), 200);
    document.addEventListener("keydown", (e) => this.onKey(e));
  }

  // Keyboard play: arrows move among the hand's tiles, Enter discards the one under the cursor,
  // the option buttons answer to their keys (keys.ts), N is Next after a hand.
  private onKey(e: KeyboardEvent): void {
    if (this.stopped || e.ctrlKey || e.metaKey || e.altKey) return;
    if (this.confirmingLeave) {
      if (e.key === "Escape") {
        e.preventDefault();
        this.confirmingLeave = false;
        this.render();
      }
      return;
    }
    const target = e.target as HTMLElement | null;
    if (target && (target.tagName === "INPUT" || target.tagName === "SELECT" || target.tagName === "TEXTAREA")) return;
    const next = this.root.querySelector<HTMLButtonElement>('[data-testid="next-hand"]');
    if (next && (e.key === "n" || e.key === "N" || (e.key === "Enter" && !target?.closest(".result")))) {
      e.preventDefault();
      next.click();
      return;
    }
    const tiles = [...this.root.querySelectorAll<HTMLElement>('[data-testid="hand-tile"]')];
    if ((e.key === "ArrowLeft" || e.key === "ArrowRight" || e.key === "Home" || e.key === "End") && tiles.length) {
      e.preventDefault();
      const at = this.cursor ?? (e.key === "ArrowLeft" ? tiles.length : -1);
      const to = e.key === "Home" ? 0 : e.key === "End" ? tiles.length - 1 : at + (e.key === "ArrowLeft" ? -1 : 1);
      this.cursor = Math.max(0, Math.min(tiles.length - 1, to));
      this.placeCursor();
      return;
    }
    if (e.key === "Enter" && this.cursor !== null && tiles[this.cursor] && (!target || target === document.body || target.dataset.testid === "hand-tile")) {
      e.preventDefault();
      tiles[this.cursor].click();
      return;
    }
    const testid = keyAction(e.key, this.root);
    if (testid) {
      e.preventDefault();
      this.root.querySelector<HTMLElement>(`[data-testid="${testid}"]`)?.click();
    }
  }

  // The cursor's tile marked and focused (after every render: the hand is drawn anew).
  private placeCursor(): void {
    const tiles = [...this.root.querySelectorAll<HTMLElement>('[data-testid="hand-tile"]')];
    if (this.cursor === null || !tiles.length) return;
    this.cursor = Math.min(this.cursor, tiles.length - 1);
    tiles.forEach((t, i) => t.classList.toggle("cursor", i === this.cursor));
    tiles[this.cursor].focus({ preventScroll: true });
  }

  private get me(): number | null {
    return this.view ? seatOf(this.view.viewer) : this.seat.seat;
  }

  private fail(err: ApiError): void {
    this.stopped = this.stopped || err.fatal;
    if (err.fatal && !this.view) this.root.querySelector(".loading")?.replaceChildren("this seat cannot be opened with its token");
    banner(err, this.root);
    if (err.fatal) {
      this.root.querySelector(".error")?.append(
        button("Back to the lobby", "leave-error", () => {
          forgetSeat();
          this.lobby();
        }),
      );
    }
  }

  // The view is the truth. A newer one replaces it (one from the stream and one fetched may
  // cross: the one of the later event stays).
  private show(view: TableView | undefined): void {
    if (!view || (this.view && view.lastSequence < this.view.lastSequence)) return;
    this.view = view;
    this.render();
  }

  // GetTableState: on arrival, after a failed Act, and after a message without a view (an
  // older gateway's, during a rollout). One at a time, coalesced.
  private refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.again = false;
        try {
          const look = { tableId: this.seat.tableId, seatToken: this.seat.token };
          const r = await hedged((o) => gateway.getTableState(look, o));
          this.show(r.table);
        } catch (e) {
          this.fail(apiError(e));
          return;
        }
      } while (this.again && !this.stopped);
    })().finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  // Subscribe from the last event seen; a stream that ends (the server's limit, a network
  // drop) is opened again from there, so nothing is missed or seen twice.
  private async follow(): Promise<void> {
    let backoff = 250;
    while (!this.stopped) {
      try {
        const request = {
          tableId: this.seat.tableId,
          seatToken: this.seat.token,
          afterSequence: this.lastSeq,
          batched: true, // a step's events (an action, the draw after it) in one message
          withView: true, // and the view after them, on the batch's last message
          heartbeats: true, // a silent stream (a paused replica) is given up: watched()
        };
        const stream = watched((o) => gateway.subscribe(request, o));
        for await (const r of stream) {
          // an older gateway (during a rollout) sends one event per message, in event
          for (const ev of r.events.length ? r.events : r.event ? [r.event] : []) this.onEvent(ev);
          if (r.view) this.show(r.view);
          else if (!r.events.length || r.events.length < MAX_EVENTS_PER_MESSAGE) void this.refresh();
          backoff = 250;
        }
        if (this.view?.phase === TablePhase.FINISHED) return;
      } catch (e) {
        const err = apiError(e);
        if (err.fatal) return this.fail(err);
        await new Promise((ok) => setTimeout(ok, backoff));
        backoff = Math.min(backoff * 2, 5000);
      }
      if (this.finished()) return;
    }
  }

  private finished(): boolean {
    return this.result.some((e) => e.kind.case === "tableFinished");
  }

  private onEvent(ev: Event): void {
    this.lastSeq = ev.sequence;
    const k = ev.kind;
    if (k.case === "prompt") this.hint = null;
    if (k.case === "handStarted") {
      this.result = [];
      this.resultShown = false;
      this.ready = false;
    }
    if (k.case === "handResult" && !this.result.length) this.resultSince = Date.now();
    if (k.case === "handResult" || k.case === "seedRevealed" || k.case === "tableFinished" || k.case === "handDrawn") {
      this.result.push(ev);
      saveResult(this.seat.tableId, this.result);
    }
    const line = this.describe(ev);
    if (line) this.log = [...this.log.slice(-60), line];
    this.seat.lastSeq = String(ev.sequence);
    this.seat.log = this.log;
    // kept for a reload, unless the page is leaving the table: an event arriving between
    // forgetSeat() and the reload's unload would keep the seat, and the page would come back
    // to the table instead of the lobby
    if (!this.stopped) saveSeat(this.seat);
  }

  name(seat: number | null): string {
    if (seat === null) return "—";
    const s = this.view?.seats[seat];
    const who = s?.displayName || s?.playerId || `seat ${seat}`;
    return seat === this.me ? `${who} (you)` : who;
  }

  /** A seat as the result names it: "You" / "你" for the viewer's own. */
  who(seat: number): Who {
    if (seat === this.me) return { en: "You", zh: "你", you: true };
    const s = this.view?.seats[seat];
    const name = s?.displayName || (s?.bot ? "a bot" : "a player");
    return { en: name, zh: name, you: false };
  }

  /** Next: this hand's result is closed here, and the table is told (it deals once everyone
   * at it has pressed Next, or when its pause runs out). */
  readyForNext(): void {
    // a tap or key meant for the hand (a pass, a discard) as its result comes up is not a Next
    if (Date.now() - this.resultSince < GUARD_MS) return;
    this.resultShown = true;
    this.render();
    if (this.me === null || this.view?.phase !== TablePhase.BETWEEN_HANDS) return;
    gateway.readyForNextHand({ tableId: this.seat.tableId, seatToken: this.seat.token, requestId: requestId() }).catch((e) => {
      const err = apiError(e);
      if (err.reason !== "NOT_BETWEEN_HANDS") this.fail(err); // the next hand came first: fine
    });
  }

  private describe(ev: Event): string {
    const k = ev.kind;
    switch (k.case) {
      case "handStarted":
        return `hand ${k.value.handNumber} — dealer ${this.name(seatOf(k.value.dealer))}, dice ${k.value.dice?.first}+${k.value.dice?.second}${k.value.kaibao ? " 开宝" : ""}`;
      case "tileDiscarded":
        return `${this.name(seatOf(k.value.seat))} discards ${tileLabel(k.value.tile)}${k.value.declaredReady ? " and declares 敲" : ""}`;
      case "meldDeclared":
        return `${this.name(seatOf(k.value.seat))} ${meldName(k.value.meld)}`;
      case "flowersExposed":
        return `${this.name(seatOf(k.value.seat))} 补花 ${tilesText(k.value.flowers)}`;
      case "wildFlipped":
        return `翻百搭: ${tileLabel(k.value.indicator)} turned up — ${tileLabel(k.value.wild)} is 百搭 this hand`;
      case "winDeclared":
        return `${this.name(seatOf(k.value.seat))} wins (${WIN_KINDS[k.value.winKind] ?? ""}) on ${tileLabel(k.value.tile)}`;
      case "handDrawn":
        return "流局 — the wall is empty";
      case "timedOut":
        return `${this.name(seatOf(k.value.seat))} timed out`;
      case "seatChanged":
        return `${this.name(seatOf(k.value.seat))}: ${k.value.reason.replace(/_/g, " ")}`;
      case "nextHandReady": // with the view after it: who is ready shows as they press
        return `${this.name(seatOf(k.value.seat))} is ready for the next hand`;
      case "seatBankrupt":
        return `破产 — ${k.value.playerId} went bankrupt after hand ${k.value.afterHand} and left; a bot takes seat ${seatOf(k.value.seat)}`;
      case "tableFinished":
        return `table finished (${k.value.reason.replace(/_/g, " ")})`;
      default:
        return "";
    }
  }

  // --- actions -------------------------------------------------------------------------------
  async act(kind: ActionKind): Promise<void> {
    if (this.acting) return;
    this.acting = true;
    try {
      const request = {
        tableId: this.seat.tableId,
        seatToken: this.seat.token,
        requestId: requestId(), // every try of this act: the same id
        lastSequence: this.view?.lastSequence ?? this.lastSeq,
        action: create(ActionSchema, { kind }),
      };
      await hedged((o) => gateway.act(request, o));
      this.ready = false;
      this.swap.clear();
      this.hint = null;
    } catch (e) {
      this.fail(apiError(e));
      void this.refresh(); // refused: what the table is now (an accepted one comes on the stream)
    } finally {
      this.acting = false;
    }
  }

  async askHint(): Promise<void> {
    try {
      const r = await gateway.getHint({ tableId: this.seat.tableId, seatToken: this.seat.token });
      if (r.action) this.hint = { action: r.action, plan: r.plan };
      this.render();
    } catch (e) {
      this.fail(apiError(e));
    }
  }


  // --- rendering -----------------------------------------------------------------------------
  render(): void {
    const v = this.view;
    if (!v) return;
    const me = this.me;
    const base = me ?? 0;
    document.title = `${PRESET_NAMES[v.ruleset?.name ?? ""] ?? v.ruleset?.name} · ${v.tableId}`;
    const felt = h("div", { class: "felt", "data-testid": "table" });
    for (let off = 0; off < 4; off++) {
      const seat = (base + off) % 4;
      felt.append(seatZone(v, v.seats[seat], seat, POSITIONS[off], seat === me, this.name(seat)));
    }
    felt.append(center(v));
    const side = h(
      "aside",
      { class: "side" },
      h("div", { class: "table-id" }, "table ", h("code", { "data-testid": "table-id" }, v.tableId)),
      me === null ? h("div", { class: "watching", "data-testid": "spectator" }, "观战 · watching — public facts only") : null,
      h("ol", { class: "log", "data-testid": "log" }, ...this.log.slice(-14).map((l) => h("li", {}, l))),
      h(
        "div",
        { class: "side-actions" },
        me !== null && v.phase !== TablePhase.FINISHED ? button("Leave table", "leave", () => this.askLeave(), "ghost") : null,
        button("Lobby", "lobby", () => void this.toLobby(me === null), "ghost"),
      ),
    );
    const errors = [...this.root.querySelectorAll(".error")];
    this.root.replaceChildren(...errors, h("div", { class: "layout" }, felt, side));
    if (me !== null) this.root.append(handSection(this, v, v.seats[me]));
    if (me !== null && v.phase === TablePhase.BETWEEN_HANDS && this.resultShown) {
      const waiting = v.seats.map((s, i) => (s.nextReady ? null : i)).filter((i): i is number => i !== null);
      this.root.append(
        h("div", { class: "between", "data-testid": "between" }, "the next hand comes ", h("span", { class: "next-countdown" }, ""), waiting.length ? ` · waiting for ${waiting.map((i) => this.who(i).en).join(", ")}` : " · everyone is ready"),
      );
    }
    const overlay = resultOverlay(this, v);
    if (overlay) this.root.append(overlay);
    if (this.confirmingLeave) this.root.append(this.leaveDialog(v));
    this.placeCursor();
    this.tick();
  }

  // Leaving mid-hand costs the escape penalty (RULES §9): it is named and asked first.
  private askLeave(): void {
    const v = this.view;
    if (v && v.phase === TablePhase.PLAYING && v.hand && !v.hand.finished) {
      this.confirmingLeave = true;
      this.render();
      this.root.querySelector<HTMLElement>('[data-testid="leave-stay"]')?.focus();
      return;
    }
    void this.leave();
  }

  private leaveDialog(v: TableView): HTMLElement {
    const penalty = v.escapePenalty;
    return h(
      "div",
      { class: "overlay confirm" },
      h(
        "div",
        { class: "dialog", role: "alertdialog", "data-testid": "leave-confirm" },
        h("h3", {}, "离开牌桌? Leave the table?"),
        h("p", {}, `The hand is still running. Leaving now is 逃跑 (an escape): you pay the escape penalty of ${penalty} ${penalty === 1n ? "chip" : "chips"}${v.garden ? " (at most what you have left)" : ""}, a bot finishes your hand, and you do not come back to this table.`),
        h("p", { class: "zh" }, `牌局进行中。现在离开算逃跑：罚 ${penalty}，由机器人替你打完这一局。`),
        h(
          "div",
          { class: "dialog-actions" },
          button("Stay 留下", "leave-stay", () => {
            this.confirmingLeave = false;
            this.render();
          }, "primary"),
          button(`Leave and pay ${penalty}`, "leave-confirm-yes", () => {
            this.confirmingLeave = false;
            void this.leave();
          }, "warn"),
        ),
      ),
    );
  }

  // Back to the lobby; a spectator leaves the table first, so its place is free for another
  // (its token is revoked: each spectator has a token of its own, counted per table).
  private async toLobby(watching: boolean): Promise<void> {
    if (watching) {
      try {
        await gateway.leave({ tableId: this.seat.tableId, seatToken: this.seat.token, requestId: requestId() });
      } catch {
        // gone already, or the gateway is away: the lobby all the same
      }
    }
    this.stopped = true; // no event keeps the seat again before the reload unloads the page
    forgetSeat();
    location.reload();
  }

  private async leave(): Promise<void> {
    try {
      await gateway.leave({ tableId: this.seat.tableId, seatToken: this.seat.token, requestId: requestId() });
      this.stopped = true;
      forgetSeat();
      this.lobby();
    } catch (e) {
      this.fail(apiError(e));
    }
  }

  private tick(): void {
    const el = this.root.querySelector<HTMLElement>(".timer");
    const v = this.view;
    if (!el || !v) return;
    const next = Number(v.nextHandUnixMs || 0n);
    for (const c of this.root.querySelectorAll<HTMLElement>(".next-countdown")) {
      c.textContent = next && v.phase === TablePhase.BETWEEN_HANDS ? ` ${Math.max(0, Math.ceil((next - Date.now()) / 1000))}s` : "";
    }
    const deadline = Number(v.prompt?.deadlineUnixMs || v.hand?.deadlineUnixMs || 0n);
    if (!deadline || v.hand?.finished || v.phase !== TablePhase.PLAYING) {
      el.textContent = "";
      return;
    }
    const left = Math.max(0, (deadline - Date.now()) / 1000);
    el.textContent = `${left.toFixed(left < 10 ? 1 : 0)}s`;
    el.classList.toggle("urgent", left < 5);
  }

  newTable(): void {
    this.stopped = true;
    forgetSeat();
    this.lobby();
  }
}
