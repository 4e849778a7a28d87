// The web table: a lobby (a table against three bots, join a seat, watch a table) and the
// table itself, driven by the gateway's view (GetTableState) and event stream (Subscribe).

import "./style.css";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  ActionSchema,
  SeatAssignmentSchema,
  TablePhase,
  PromptKind,
  HandOutcome,
  type Action,
  type Event,
  type HandResult,
  type Prompt,
  type SeatView,
  type SeedRevealed,
  type TableFinished,
  type TableView,
} from "./gen/mahjong/gateway/v1/gateway_pb";
import { HandType, MeldKind, WinKind, type Meld } from "./gen/mahjong/common/v1/common_pb";
import { apiError, gateway, protocol, requestId, type ApiError } from "./api";
import { tileBack, tileElement, tileLabel, tilesText } from "./tiles";
import { forgetSeat, loadResult, loadSeat, saveResult, saveSeat, type Seat } from "./saved";
import { verifyCommitment } from "./verify";

const WINDS = ["东", "南", "西", "北"];
const HAND_TYPES: Record<number, string> = {
  [HandType.PONG_PONG]: "碰碰胡",
  [HandType.HALF_FLUSH]: "混一色",
  [HandType.FULL_FLUSH]: "清一色",
  [HandType.HALF_FLUSH_PONGS]: "混碰",
  [HandType.FULL_FLUSH_PONGS]: "清碰",
  [HandType.ALL_HONORS]: "风一色",
  [HandType.ALL_HONOR_PONGS]: "风碰",
  [HandType.EIGHT_FLOWERS]: "八花齐",
};
// The rules a table can be started with: a preset and its options (RULES §13, RULES-presets).
const RULES: { id: string; label: string; name: string; options: Record<string, string> }[] = [
  { id: "qiaoma", label: "上海敲麻 Qiaoma", name: "shanghai-qiaoma", options: {} },
  { id: "old", label: "上海老麻将 户/番", name: "shanghai-old", options: {} },
  { id: "baida", label: "上海百搭 4 × 百搭", name: "shanghai-baida", options: {} },
  { id: "baida-flipped", label: "上海百搭 翻百搭", name: "shanghai-baida", options: { "baida_tiles.wildcards": "flipped" } },
];
const PRESET_NAMES: Record<string, string> = {
  "": "上海敲麻",
  "shanghai-qiaoma": "上海敲麻",
  "shanghai-old": "上海老麻将",
  "shanghai-baida": "上海百搭",
};

const WIN_KINDS: Record<number, string> = {
  [WinKind.SELF_DRAW]: "自摸",
  [WinKind.DISCARD]: "点炮",
  [WinKind.ROB_KONG]: "抢杠",
  [WinKind.EIGHT_FLOWERS]: "八花齐",
};

const app = document.getElementById("app")!;

function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string | null | undefined | false)[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) e.append(c);
  return e;
}

function button(label: string, testid: string, onClick: () => void, cls = ""): HTMLButtonElement {
  const b = h("button", { class: `btn ${cls}`, "data-testid": testid, type: "button" }, label);
  b.addEventListener("click", onClick);
  return b;
}

function seatOf(v: number): number | null {
  return v > 0 ? v - 1 : null; // proto Seat: seat + 1, 0 = unset
}

function banner(err: ApiError, where: HTMLElement): void {
  const box = h(
    "div",
    { class: "error", role: "alert", "data-testid": "error" },
    h("strong", {}, `${err.code}${err.reason && err.reason !== err.code ? ` · ${err.reason}` : ""}`),
    h("span", {}, err.message),
  );
  where.querySelector(".error")?.remove();
  where.prepend(box);
  if (!err.fatal) setTimeout(() => box.remove(), 6000);
}

// --- the lobby -------------------------------------------------------------------------------
function lobby(error?: ApiError): void {
  document.title = "上海敲麻 · Shanghai Mahjong";
  const name = h("input", { id: "name", value: localStorage.getItem("mahjong.name") ?? "", placeholder: "your name", maxlength: "32" });
  const hands = h("select", { id: "hands" }, ...["1", "4", "8"].map((n) => h("option", { value: n }, `${n} hand${n === "1" ? "" : "s"}`)));
  hands.value = "4";
  const rules = h("select", { id: "rules" }, ...RULES.map((r) => h("option", { value: r.id }, r.label)));
  const tableId = h("input", { id: "join-table", placeholder: "table id" });
  const token = h("input", { id: "join-token", placeholder: "seat token (empty: an open seat)" });
  const watchId = h("input", { id: "watch-table", placeholder: "table id" });
  const page = h(
    "main",
    { class: "lobby" },
    h("h1", {}, "上海敲麻", h("small", {}, "Shanghai Mahjong")),
    // a hand laid out on the felt: the four winds, the three dragons, 一万 一筒 一条 and a flower
    h("div", { class: "deco felt-strip" }, ...[28, 29, 30, 31, 34, 33, 32, 1, 10, 19, 39].map((v) => tileElement(v, "lg"))),
    h(
      "section",
      { class: "card" },
      h("h2", {}, "Play against three bots"),
      h("label", {}, "Name ", name),
      h("label", {}, "Length ", hands),
      h("label", {}, "Rules ", rules),
      button("Start a table", "create", () => void createTable(name.value, Number(hands.value), rules.value), "primary"),
    ),
    h(
      "section",
      { class: "card" },
      h("h2", {}, "Join a table"),
      tableId,
      token,
      button("Take the seat", "join", () => void joinTable(tableId.value.trim(), token.value.trim(), name.value)),
    ),
    h(
      "section",
      { class: "card" },
      h("h2", {}, "Watch a table"),
      watchId,
      button("Watch", "watch", () => void watchTable(watchId.value.trim())),
    ),
    h("p", { class: "foot" }, `gateway over ${protocol === "grpc-web" ? "gRPC-Web" : "Connect"}`),
  );
  app.replaceChildren(page);
  if (error) banner(error, page);
}

function playerName(name: string): { id: string; display: string } {
  const display = name.trim() || "Guest";
  localStorage.setItem("mahjong.name", display);
  let id = localStorage.getItem("mahjong.player");
  if (!id) {
    id = `web-${crypto.randomUUID().slice(0, 8)}`;
    localStorage.setItem("mahjong.player", id);
  }
  return { id, display };
}

async function createTable(name: string, maxHands: number, rulesId = "qiaoma"): Promise<void> {
  const me = playerName(name);
  const rules = RULES.find((r) => r.id === rulesId) ?? RULES[0];
  try {
    const r = await gateway.createTable({
      requestId: requestId(),
      ruleset: { name: rules.name, options: rules.options },
      stake: 1n,
      maxHands,
      seats: [
        create(SeatAssignmentSchema, { playerId: me.id, displayName: me.display }),
        ...[1, 2, 3].map((i) => create(SeatAssignmentSchema, { bot: true, displayName: `Bot ${i}` })),
      ],
    });
    open({ tableId: r.tableId, token: r.seatTokens[0], seat: 0, lastSeq: "0" });
  } catch (e) {
    lobby(apiError(e));
  }
}

// With a token (from CreateTable, matchmaking or a friend) the token is the seat: the table is
// opened with it and every call checks it. Without one, JoinSeat takes an open seat.
async function joinTable(tableId: string, token: string, name: string): Promise<void> {
  if (token) {
    open({ tableId, token, seat: null, lastSeq: "0" });
    return;
  }
  const me = playerName(name);
  try {
    const r = await gateway.joinSeat({ requestId: requestId(), tableId, playerId: me.id, displayName: me.display });
    open({ tableId, token: r.seatToken, seat: seatOf(r.seat), lastSeq: "0" });
  } catch (e) {
    lobby(apiError(e));
  }
}

async function watchTable(tableId: string): Promise<void> {
  try {
    const r = await gateway.joinSeat({ requestId: requestId(), tableId, spectator: true });
    open({ tableId, token: r.seatToken, seat: null, lastSeq: "0" });
  } catch (e) {
    lobby(apiError(e));
  }
}

function open(seat: Seat): void {
  saveSeat(seat);
  history.replaceState(null, "", location.pathname + location.search.replace(/([?&])(table|token|watch)=[^&]*/g, "$1"));
  new TableScreen(seat).start();
}

// --- the table -------------------------------------------------------------------------------
type ActionKind = MessageInitShape<typeof ActionSchema>["kind"];
type Position = "bottom" | "right" | "top" | "left";
const POSITIONS: Position[] = ["bottom", "right", "top", "left"];

class TableScreen {
  private view: TableView | null = null;
  private lastSeq: bigint;
  private result: Event[];
  private resultShown = false;
  private ready = false; // 敲 chosen: the next discard declares ready
  private swap = new Set<number>(); // indexes of concealed tiles picked to bury (换牌)
  private hint: { action: Action; plan: string } | null = null; // for the pending prompt
  private log: string[] = [];
  private refreshing: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private acting = false;
  private root = h("main", { class: "table-screen" });

  constructor(private seat: Seat) {
    this.lastSeq = BigInt(seat.lastSeq || "0");
    this.log = seat.log ?? [];
    this.result = loadResult(seat.tableId);
  }

  start(): void {
    app.replaceChildren(this.root);
    this.root.append(h("div", { class: "loading" }, "joining the table…"));
    void this.refresh().then(() => void this.follow());
    setInterval(() => this.tick(), 200);
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
          lobby();
        }),
      );
    }
  }

  // The view is the truth: fetched after every batch of events (one at a time, coalesced).
  private refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.again = false;
        try {
          const r = await gateway.getTableState({ tableId: this.seat.tableId, seatToken: this.seat.token });
          this.view = r.table ?? null;
          this.render();
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
        const stream = gateway.subscribe({
          tableId: this.seat.tableId,
          seatToken: this.seat.token,
          afterSequence: this.lastSeq,
        });
        for await (const r of stream) {
          if (r.event) this.onEvent(r.event);
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
    if (k.case === "handResult" || k.case === "seedRevealed" || k.case === "tableFinished" || k.case === "handDrawn") {
      this.result.push(ev);
      saveResult(this.seat.tableId, this.result);
    }
    const line = this.describe(ev);
    if (line) this.log = [...this.log.slice(-60), line];
    this.seat.lastSeq = String(ev.sequence);
    this.seat.log = this.log;
    saveSeat(this.seat);
    void this.refresh();
  }

  private name(seat: number | null): string {
    if (seat === null) return "—";
    const s = this.view?.seats[seat];
    const who = s?.displayName || s?.playerId || `seat ${seat}`;
    return seat === this.me ? `${who} (you)` : who;
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
      case "tableFinished":
        return `table finished (${k.value.reason.replace(/_/g, " ")})`;
      default:
        return "";
    }
  }

  // --- actions -------------------------------------------------------------------------------
  private async act(kind: ActionKind): Promise<void> {
    if (this.acting) return;
    this.acting = true;
    try {
      await gateway.act({
        tableId: this.seat.tableId,
        seatToken: this.seat.token,
        requestId: requestId(),
        lastSequence: this.view?.lastSequence ?? this.lastSeq,
        action: create(ActionSchema, { kind }),
      });
      this.ready = false;
      this.swap.clear();
      this.hint = null;
    } catch (e) {
      this.fail(apiError(e));
    } finally {
      this.acting = false;
      void this.refresh();
    }
  }

  private async askHint(): Promise<void> {
    try {
      const r = await gateway.getHint({ tableId: this.seat.tableId, seatToken: this.seat.token });
      if (r.action) this.hint = { action: r.action, plan: r.plan };
      this.render();
    } catch (e) {
      this.fail(apiError(e));
    }
  }

  /** Whether the hint names this option (``kind``: the action's case, ``kong-<MeldKind>``). */
  private hinted(kind: string, tile = 0): boolean {
    const a = this.hint?.action.kind;
    if (!a || !this.view?.prompt) return false;
    switch (a.case) {
      case "discard":
        return kind === "discard" && a.value.tile === tile;
      case "declareReady":
        return (kind === "ready" || kind === "discard") && a.value.discard === tile;
      case "kong":
        return kind === `kong-${a.value.kind}` && (a.value.tile === 0 || a.value.tile === tile);
      case "tileSwap":
        return kind === "swap" && a.value.tiles.includes(tile);
      default:
        return kind === a.case;
    }
  }

  // --- rendering -----------------------------------------------------------------------------
  private render(): void {
    const v = this.view;
    if (!v) return;
    const me = this.me;
    const base = me ?? 0;
    document.title = `${PRESET_NAMES[v.ruleset?.name ?? ""] ?? v.ruleset?.name} · ${v.tableId}`;
    const felt = h("div", { class: "felt", "data-testid": "table" });
    for (let off = 0; off < 4; off++) {
      const seat = (base + off) % 4;
      felt.append(this.seatZone(v, v.seats[seat], seat, POSITIONS[off], seat === me));
    }
    felt.append(this.center(v));
    const side = h(
      "aside",
      { class: "side" },
      h("div", { class: "table-id" }, "table ", h("code", { "data-testid": "table-id" }, v.tableId)),
      me === null ? h("div", { class: "watching", "data-testid": "spectator" }, "观战 · watching — public facts only") : null,
      h("ol", { class: "log", "data-testid": "log" }, ...this.log.slice(-14).map((l) => h("li", {}, l))),
      h(
        "div",
        { class: "side-actions" },
        me !== null && v.phase !== TablePhase.FINISHED ? button("Leave table", "leave", () => void this.leave(), "ghost") : null,
        button("Lobby", "lobby", () => void this.toLobby(me === null), "ghost"),
      ),
    );
    const errors = [...this.root.querySelectorAll(".error")];
    this.root.replaceChildren(...errors, h("div", { class: "layout" }, felt, side));
    if (me !== null) this.root.append(this.hand(v, v.seats[me]));
    const overlay = this.resultOverlay(v);
    if (overlay) this.root.append(overlay);
    this.tick();
  }

  private seatZone(v: TableView, s: SeatView | undefined, seat: number, pos: Position, mine: boolean): HTMLElement {
    const hand = v.hand;
    const dealer = hand ? seatOf(hand.dealer) : null;
    const wind = dealer === null ? "" : WINDS[(seat - dealer + 4) % 4];
    const toAct = hand && !hand.finished && seatOf(hand.toAct) === seat;
    const flags = h(
      "span",
      { class: "flags" },
      dealer === seat ? h("span", { class: "flag dealer", title: "dealer 庄" }, "庄") : null,
      s?.ready ? h("span", { class: "flag ready", "data-testid": `ready-${seat}`, title: "declared ready 敲" }, "敲") : null,
      s?.autoPlay ? h("span", { class: "flag auto", "data-testid": `auto-${seat}`, title: "auto-play 托管" }, "托管") : null,
      s?.bot ? h("span", { class: "flag bot", title: "a bot plays this seat" }, "机") : null,
      s?.left ? h("span", { class: "flag left" }, "left") : null,
    );
    const plate = h(
      "div",
      { class: `plate${toAct ? " to-act" : ""}` },
      h("span", { class: "wind" }, wind),
      h("span", { class: "who" }, this.name(seat)),
      flags,
      h("span", { class: `chips ${s && s.chips < 0n ? "neg" : ""}` }, `${s && s.chips > 0n ? "+" : ""}${s?.chips ?? 0n}`),
    );
    const melds = h("div", { class: "melds" }, ...(s?.melds ?? []).map((m) => meldElement(m)));
    const flowers = h("div", { class: "flowers", "data-testid": `flowers-${seat}` }, ...(s?.flowers ?? []).map((t) => tileElement(t, "sm")));
    const backs = h("div", { class: "backs" });
    if (!mine) for (let i = 0; i < (s?.concealedCount ?? 0); i++) backs.append(tileBack("sm"));
    const discards = h("div", { class: "discards", "data-testid": `discards-${seat}` });
    (s?.discards ?? []).forEach((t, i, all) => {
      const tile = wildMarked(tileElement(t, "sm"), t, hand?.wildKind);
      if (hand && i === all.length - 1 && seatOf(hand.lastDiscardSeat) === seat && hand.lastDiscard === t) tile.classList.add("last");
      discards.append(tile);
    });
    return h(
      "section",
      { class: `seat seat-${pos}${mine ? " mine" : ""}`, "data-seat": String(seat) },
      plate,
      h("div", { class: "row" }, backs, melds, flowers),
      discards,
    );
  }

  private center(v: TableView): HTMLElement {
    const hand = v.hand;
    const phase = TablePhase[v.phase].toLowerCase().replace("_", " ");
    return h(
      "div",
      { class: "center" },
      h("div", { class: "wall-count", "data-testid": "tiles-left" }, hand ? String(hand.tilesLeft) : "—", h("small", {}, "tiles left")),
      h("div", { class: "timer", "data-testid": "timer" }, ""),
      h(
        "div",
        { class: "meta" },
        hand ? `hand ${hand.handNumber}${v.maxHands ? ` / ${v.maxHands}` : ""}` : phase,
        hand && hand.huangfan ? ` · 荒番 ${hand.huangfan}` : "",
        hand && hand.kaibao ? " · 开宝" : "",
      ),
      hand ? h("div", { class: "commit", title: "SHA-256 of the wall's seed, revealed at the end" }, `commitment ${hand.commitment.slice(0, 12)}…`) : null,
      h("div", { class: "rules", "data-testid": "rules" }, PRESET_NAMES[v.ruleset?.name ?? ""] ?? v.ruleset?.name ?? ""),
      hand?.wildIndicator ? wildBox(hand.wildIndicator, hand.wildKind) : null,
    );
  }

  private hand(v: TableView, s: SeatView | undefined): HTMLElement {
    const prompt = v.prompt;
    const opts = prompt?.options;
    const own = prompt?.kind === PromptKind.OWN_TURN;
    const swapping = prompt?.kind === PromptKind.TILE_SWAP;
    const allowed = new Set(own ? (this.ready ? opts?.readyDiscards : opts?.discards) ?? [] : []);
    const tiles = h("div", { class: "my-tiles", "data-testid": "my-tiles" });
    const concealed = [...(s?.concealed ?? [])];
    // the drawn tile stands apart at the right, as at a real table
    const drawnAt = s && s.drawn ? concealed.lastIndexOf(s.drawn) : -1;
    const order = concealed.map((t, i) => ({ t, i })).filter((x) => x.i !== drawnAt).sort((a, b) => a.t - b.t);
    if (drawnAt >= 0) order.push({ t: concealed[drawnAt], i: drawnAt });
    for (const { t, i } of order) {
      const tile = wildMarked(tileElement(t, "lg"), t, v.hand?.wildKind);
      tile.setAttribute("data-testid", "hand-tile");
      if (i === drawnAt) tile.classList.add("drawn");
      if (own && allowed.has(t)) {
        tile.classList.add("playable");
        tile.setAttribute("data-playable", "1");
        tile.tabIndex = 0;
        tile.addEventListener("click", () =>
          void this.act(this.ready ? { case: "declareReady", value: { discard: t } } : { case: "discard", value: { tile: t } }),
        );
        if (this.hinted("discard", t)) tile.classList.add("hinted");
      }
      if (swapping) {
        tile.classList.add("playable");
        if (this.swap.has(i)) tile.classList.add("picked");
        if (this.hinted("swap", t)) tile.classList.add("hinted");
        tile.addEventListener("click", () => {
          if (this.swap.has(i)) this.swap.delete(i);
          else if (this.swap.size < (opts?.swapCount ?? 0)) this.swap.add(i);
          this.render();
        });
      }
      tiles.append(tile);
    }
    const bar = h("div", { class: "options", "data-testid": "options" });
    if (prompt && opts) this.options(prompt, bar, concealed);
    if (s?.autoPlay) bar.append(button("Take back control (托管 off)", "opt-resume", () => void this.act({ case: "resume", value: {} }), "warn"));
    const hintText = this.hint && prompt ? this.hint.plan : "";
    return h(
      "section",
      { class: `my-hand${prompt ? " prompted" : ""}`, "data-testid": "my-hand" },
      h("div", { class: "prompt-line", "data-testid": "prompt" }, promptText(prompt, this.ready), hintText ? h("span", { class: "plan", "data-testid": "hint-plan" }, `提示: ${hintText}`) : null),
      tiles,
      bar,
    );
  }

  private options(prompt: Prompt, bar: HTMLElement, concealed: number[]): void {
    const o = prompt.options!;
    const add = (label: string, testid: string, kind: ActionKind, hintKey: string, cls = "", tile = 0) => {
      const b = button(label, testid, () => void this.act(kind), cls);
      if (this.hinted(hintKey, tile)) b.classList.add("hinted");
      bar.append(b);
    };
    switch (prompt.kind) {
      case PromptKind.OWN_TURN:
        if (o.winShape) add("胡 Win (自摸)", "opt-win", { case: "win", value: { eightFlowers: false } }, "win", "win");
        if (o.winEightFlowers) add("八花齐 Eight flowers", "opt-eight-flowers", { case: "win", value: { eightFlowers: true } }, "win", "win");
        for (const t of o.concealedKongs) add(`暗杠 ${tileLabel(t)}`, `opt-concealed-kong-${t}`, { case: "kong", value: { kind: MeldKind.CONCEALED_KONG, tile: t } }, `kong-${MeldKind.CONCEALED_KONG}`, "", t);
        for (const t of o.addedKongs) add(`加杠 ${tileLabel(t)}`, `opt-added-kong-${t}`, { case: "kong", value: { kind: MeldKind.ADDED_KONG, tile: t } }, `kong-${MeldKind.ADDED_KONG}`, "", t);
        if (o.readyDiscards.length) {
          const b = button(this.ready ? "敲 on: pick the discard" : "敲 Declare ready", "opt-ready", () => {
            this.ready = !this.ready;
            this.render();
          }, this.ready ? "active" : "");
          if (this.hint?.action.kind.case === "declareReady") b.classList.add("hinted");
          bar.append(b);
        }
        break;
      case PromptKind.CLAIM:
      case PromptKind.ROB_KONG:
        if (o.win) add(prompt.kind === PromptKind.ROB_KONG ? "抢杠胡 Rob the kong" : "胡 Win", "opt-win", { case: "win", value: { eightFlowers: false } }, "win", "win");
        if (o.exposedKong) add("杠 Kong", "opt-kong", { case: "kong", value: { kind: MeldKind.EXPOSED_KONG, tile: 0 } }, `kong-${MeldKind.EXPOSED_KONG}`);
        if (o.pong) add("碰 Pong", "opt-pong", { case: "pong", value: {} }, "pong");
        o.chows.forEach((c, i) => {
          const b = button("", `opt-chow-${i}`, () => void this.act({ case: "chow", value: { tiles: c.tiles } }));
          b.append("吃 ", ...c.tiles.map((t) => tileElement(t, "sm")));
          const a = this.hint?.action.kind;
          if (a?.case === "chow" && a.value.tiles.join() === c.tiles.join()) b.classList.add("hinted");
          bar.append(b);
        });
        if (o.pass) add("过 Pass", "opt-pass", { case: "pass", value: {} }, "pass", "ghost");
        break;
      case PromptKind.TILE_SWAP: {
        const picked = [...this.swap].map((i) => concealed[i]);
        const b = button(`换牌 bury ${picked.length}/${o.swapCount}`, "opt-swap", () => void this.act({ case: "tileSwap", value: { tiles: picked } }));
        b.disabled = picked.length !== o.swapCount;
        bar.append(b);
        break;
      }
    }
    if (this.view?.hints) bar.append(button("提示 Hint", "opt-hint", () => void this.askHint(), "ghost"));
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
    forgetSeat();
    location.reload();
  }

  private async leave(): Promise<void> {
    try {
      await gateway.leave({ tableId: this.seat.tableId, seatToken: this.seat.token, requestId: requestId() });
      forgetSeat();
      this.stopped = true;
      lobby();
    } catch (e) {
      this.fail(apiError(e));
    }
  }

  private tick(): void {
    const el = this.root.querySelector<HTMLElement>(".timer");
    const v = this.view;
    if (!el || !v) return;
    const deadline = Number(v.prompt?.deadlineUnixMs || v.hand?.deadlineUnixMs || 0n);
    if (!deadline || v.hand?.finished || v.phase !== TablePhase.PLAYING) {
      el.textContent = "";
      return;
    }
    const left = Math.max(0, (deadline - Date.now()) / 1000);
    el.textContent = `${left.toFixed(left < 10 ? 1 : 0)}s`;
    el.classList.toggle("urgent", left < 5);
  }

  // --- the end of a hand ---------------------------------------------------------------------
  private resultOverlay(v: TableView): HTMLElement | null {
    const result = this.result.find((e) => e.kind.case === "handResult")?.kind.value as HandResult | undefined;
    const seed = this.result.find((e) => e.kind.case === "seedRevealed")?.kind.value as SeedRevealed | undefined;
    const finished = this.result.find((e) => e.kind.case === "tableFinished")?.kind.value as TableFinished | undefined;
    if (!result || this.resultShown) return null;
    const names = (s: number) => this.name(s);
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
          button("New table", "new-table", () => {
            forgetSeat();
            lobby();
          }, "primary"),
        )
      : button("Next hand", "next-hand", () => {
          this.resultShown = true;
          this.render();
        }, "primary");
    return h(
      "div",
      { class: "overlay" },
      h(
        "div",
        { class: "result", "data-testid": "result" },
        h("h2", {}, title),
        payments,
        h("div", { class: "result-body" }, breakdown, h("div", { class: "result-side" }, revealed, seedBox)),
        close,
      ),
    );
  }
}

function meldName(m: Meld | undefined): string {
  if (!m) return "";
  const kinds: Record<number, string> = {
    [MeldKind.CHOW]: "吃",
    [MeldKind.PONG]: "碰",
    [MeldKind.EXPOSED_KONG]: "明杠",
    [MeldKind.ADDED_KONG]: "加杠",
    [MeldKind.CONCEALED_KONG]: "暗杠",
  };
  return `${kinds[m.kind] ?? "meld"} ${tilesText(m.tiles)}`;
}

/** 翻百搭 (RULES-presets §13.B.9): the indicator turned up beside the wall, and the kind it
 * makes 百搭 this hand. */
function wildBox(indicator: number, wild: number): HTMLElement {
  const shown = tileElement(indicator, "md");
  shown.setAttribute("data-testid", "wild-indicator");
  const kind = wildMarked(tileElement(wild, "md"), wild, wild);
  kind.setAttribute("data-testid", "wild-kind");
  return h(
    "div",
    { class: "wild", "data-testid": "wild", title: `翻百搭: ${tileLabel(indicator)} turned up, every ${tileLabel(wild)} is 百搭` },
    h("span", { class: "wild-label" }, "翻"),
    shown,
    h("span", { class: "wild-arrow" }, "→"),
    kind,
    h("span", { class: "wild-label" }, "百搭"),
  );
}

/** A tile of the flipped wild kind wears a 百搭 badge wherever it is shown. */
function wildMarked(tile: HTMLElement, value: number, wild: number | undefined): HTMLElement {
  if (wild && value === wild) {
    tile.classList.add("wild-tile");
    tile.append(h("span", { class: "wild-badge" }, "搭"));
  }
  return tile;
}

function meldElement(m: Meld): HTMLElement {
  const box = h("span", { class: `meld meld-${m.kind}` });
  if (m.kind === MeldKind.CONCEALED_KONG && m.tiles.length === 0) for (let i = 0; i < 4; i++) box.append(tileBack("sm"));
  else m.tiles.forEach((t, i) => {
    const tile = m.kind === MeldKind.CONCEALED_KONG && (i === 0 || i === 3) ? tileBack("sm") : tileElement(t, "sm");
    if (m.claimedTile && t === m.claimedTile) tile.classList.add("claimed");
    box.append(tile);
  });
  return box;
}

function promptText(p: Prompt | undefined, ready: boolean): string {
  if (!p) return "";
  switch (p.kind) {
    case PromptKind.OWN_TURN:
      return ready ? "敲: click the tile to discard with it" : "Your turn: click a tile to discard it";
    case PromptKind.CLAIM:
      return `${tileLabel(p.tile)} was discarded — claim it?`;
    case PromptKind.ROB_KONG:
      return `a kong is added with ${tileLabel(p.tile)} — rob it?`;
    case PromptKind.TILE_SWAP:
      return `换牌: pick ${p.options?.swapCount ?? 0} tiles to bury`;
    default:
      return "";
  }
}

// --- start -----------------------------------------------------------------------------------
const params = new URLSearchParams(location.search);
if (params.get("table") && params.get("token")) {
  open({ tableId: params.get("table")!, token: params.get("token")!, seat: null, lastSeq: "0" });
} else if (params.get("watch")) {
  void watchTable(params.get("watch")!);
} else {
  const saved = loadSeat();
  if (saved) new TableScreen(saved).start();
  else lobby();
}
