// The operator's console (?admin): an operator signs in with the operator role of the studio's
// issuer (here the development issuer's /token?role=operator) and gets an operator's session,
// kept in this tab only (sessionStorage) and refreshed before it expires. Every console call
// sends it as `authorization: Bearer`; the servers refuse a player's session
// (PERMISSION_DENIED) and anything forged or ended (UNAUTHENTICATED). It lists the live tables
// of every gateway replica, whichever serves the page (by level, room, tournament, halted),
// inspects one (its public state and log), ends one (a reason, then a confirmation: the
// replica serving the page sends both on to the table's owner), finds a player by id or name (sessions, seats,
// queue, room, balances, last ledger entries), suspends (reason, optional end) and lifts,
// revokes a session, and reads the audit log.

import type { Session } from "./gen/mahjong/matchmaking/v1/matchmaking_pb";
import type { Event, TableSummary } from "./gen/mahjong/gateway/v1/gateway_pb";
import type { PlayerDossier } from "./gen/mahjong/matchmaking/v1/matchmaking_pb";
import { apiError, gateway, IssuerError, issuerUrl, matchmaking, requestId } from "./api";
import { app, banner, button, h } from "./dom";

interface Operator {
  token: string;
  refreshToken: string;
  expiresAt: number;
  name: string;
}

const KEY = "mahjong.operator";

function kept(): Operator | null {
  try {
    return JSON.parse(sessionStorage.getItem(KEY) ?? "null") as Operator | null;
  } catch {
    return null;
  }
}

function keep(s: Session | undefined, name: string): Operator {
  if (!s?.operator) throw new Error("this sign-in is not an operator's: the token names no operator role");
  const op = {
    token: s.sessionToken,
    refreshToken: s.refreshToken,
    expiresAt: Number(s.expiresAtUnixMs),
    name,
  };
  sessionStorage.setItem(KEY, JSON.stringify(op));
  return op;
}

/** The operator's ID token from the development issuer (a studio's page: its own login). */
async function operatorIdToken(name: string): Promise<string> {
  const url = `${issuerUrl}/token?name=${encodeURIComponent(name)}&role=operator`;
  const resp = await fetch(url, { cache: "no-store" }).catch((e: unknown) => {
    throw new IssuerError(`the issuer at ${issuerUrl} does not answer (${String(e)})`);
  });
  const body = (await resp.json().catch(() => ({}))) as { id_token?: string; error?: string };
  if (!resp.ok || !body.id_token) throw new IssuerError(body.error ?? `the issuer answered ${resp.status}`);
  return body.id_token;
}

/** The kept session, refreshed when it expires within a minute (null: sign in again). */
async function live(): Promise<Operator | null> {
  const op = kept();
  if (!op) return null;
  if (op.expiresAt - Date.now() > 60_000) return op;
  try {
    const r = await matchmaking.refreshSession({ refreshToken: op.refreshToken });
    return keep(r.session, op.name);
  } catch {
    sessionStorage.removeItem(KEY);
    return null;
  }
}

async function auth(): Promise<{ headers: Record<string, string> }> {
  const op = await live();
  if (!op) {
    signInScreen();
    throw new Error("signed out");
  }
  return { headers: { authorization: `Bearer ${op.token}` } };
}

function field(label: string, testid: string, type = "text"): HTMLInputElement {
  return h("input", { "data-testid": testid, type, placeholder: label, "aria-label": label });
}

const when = (ms: bigint | number): string => (Number(ms) ? new Date(Number(ms)).toISOString().slice(0, 19) : "—");

/** Runs ``fn``, showing its error on ``where`` (the console stays usable). */
async function attempt(where: HTMLElement, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof Error && e.message === "signed out") return;
    banner(apiError(e), where);
  }
}

export function admin(): void {
  if (kept()) void console_();
  else signInScreen();
}

function signInScreen(): void {
  const name = field("operator name", "op-name");
  const box = h("section", { class: "admin", "data-testid": "op-signin" }, h("h2", {}, "Operator sign-in"), name);
  box.append(
    button("Sign in as operator", "op-signin-go", () =>
      void attempt(box, async () => {
        const idToken = await operatorIdToken(name.value.trim());
        const r = await matchmaking.signIn({ idToken, displayName: name.value.trim(), requestId: requestId() });
        keep(r.session, r.player?.displayName ?? name.value);
        await console_();
      }),
    ),
  );
  app.replaceChildren(box);
}

async function console_(): Promise<void> {
  const op = kept();
  const tables = h("section", { class: "admin", "data-testid": "op-tables" });
  const players = h("section", { class: "admin", "data-testid": "op-players" });
  const audit = h("section", { class: "admin", "data-testid": "op-audit" });
  const head = h(
    "header",
    { class: "admin" },
    h("h2", {}, `Operator console · ${op?.name ?? ""}`),
    button("Sign out", "op-signout", () => {
      const s = kept();
      sessionStorage.removeItem(KEY);
      if (s) void matchmaking.signOut({ sessionToken: s.token }).catch(() => undefined);
      signInScreen();
    }),
  );
  app.replaceChildren(head, tables, players, audit);
  tablesPanel(tables);
  playersPanel(players);
  auditPanel(audit);
}

// --- tables ----------------------------------------------------------------------------------
function tablesPanel(box: HTMLElement): void {
  const level = field("level (stake)", "op-f-level", "number");
  const room = field("room code", "op-f-room");
  const tournament = field("tournament id", "op-f-tournament");
  const halted = h("input", { type: "checkbox", "data-testid": "op-f-halted" });
  const list = h("div", { "data-testid": "op-table-list" });
  const detail = h("div", { "data-testid": "op-table-detail" });
  const load = (): Promise<void> =>
    attempt(box, async () => {
      const prefix = room.value.trim()
        ? `room/${room.value.trim()}`
        : tournament.value.trim()
          ? `tournament/${tournament.value.trim()}/`
          : "";
      const r = await gateway.listTables(
        { tagPrefix: prefix, stake: BigInt(level.value || "0"), haltedOnly: halted.checked },
        await auth(),
      );
      list.replaceChildren(
        r.tables.length ? tableRows(r.tables, detail, load) : h("p", { "data-testid": "op-no-tables" }, "No live tables."),
      );
    });
  box.append(
    h("h3", {}, "Live tables"),
    h("div", { class: "admin-filters" }, level, room, tournament, h("label", {}, halted, " halted only")),
    button("List tables", "op-list-tables", () => void load()),
    list,
    detail,
  );
}

function tableRows(tables: TableSummary[], detail: HTMLElement, reload: () => Promise<void>): HTMLElement {
  const rows = tables.map((t) =>
    h(
      "tr",
      { "data-testid": "op-table-row", "data-table": t.tableId },
      h("td", {}, t.tableId),
      h("td", {}, t.tag),
      h("td", {}, t.phase),
      h("td", {}, String(t.stake)),
      h("td", {}, `${t.handsPlayed} played`),
      h("td", {}, t.playerIds.join(", ")),
      h(
        "td",
        {},
        button("Inspect", "op-inspect", () => void inspect(t.tableId, detail)),
        button("End…", "op-end", () => endForm(t.tableId, detail, reload)),
      ),
    ),
  );
  return h(
    "table",
    { class: "admin-list" },
    h("tr", {}, ...["table", "tag", "phase", "level", "hands", "players", ""].map((c) => h("th", {}, c))),
    ...rows,
  );
}

function eventLine(e: Event): string {
  const hand = e.handNumber ? ` hand ${e.handNumber}` : "";
  return `#${e.sequence} ${when(e.timeUnixMs)}${hand} ${e.kind.case ?? "?"}`;
}

async function inspect(tableId: string, detail: HTMLElement, after = 0n): Promise<void> {
  await attempt(detail, async () => {
    const r = await gateway.inspectTable({ tableId, afterSequence: after, limit: 50 }, await auth());
    const t = r.table;
    const seats = (t?.seats ?? []).map((s, i) => h("li", {}, `seat ${i}: ${s.playerId || "—"} · ${String(s.chips)} chips`));
    const log = h("ol", { "data-testid": "op-table-log" }, ...r.events.map((e) => h("li", {}, eventLine(e))));
    const more = Number(r.nextAfterSequence)
      ? button("Next log page", "op-log-more", () => void inspect(tableId, detail, r.nextAfterSequence))
      : null;
    detail.replaceChildren(
      h(
        "div",
        { "data-testid": "op-table-state" },
        h("h4", {}, `Table ${tableId}`),
        h("p", {}, `${t?.tag ?? ""} · phase ${t?.phase ?? ""} · level ${String(t?.stake ?? 0)} · ${t?.handsPlayed ?? 0} hands played · last event #${String(t?.lastSequence ?? 0)}`),
        h("ul", {}, ...seats),
      ),
      h("h4", {}, "Log"),
      log,
      ...(more ? [more] : []),
    );
  });
}

function endForm(tableId: string, detail: HTMLElement, reload: () => Promise<void>): void {
  const reason = field("why (kept in the audit log)", "op-end-reason");
  const confirm = button("Confirm: end this table", "op-end-confirm", () =>
    void attempt(detail, async () => {
      if (!reason.value.trim()) throw new Error("a reason is required");
      const r = await gateway.endTable({ tableId, reason: reason.value.trim() }, await auth());
      const voided = r.voidedHandId ? `hand ${r.voidedHandId} voided (seed ${r.seed})` : "no hand was running";
      detail.replaceChildren(h("p", { "data-testid": "op-ended" }, `Table ${tableId} ended: ${voided}.`));
      await reload();
    }),
    "danger",
  );
  detail.replaceChildren(
    h(
      "div",
      { "data-testid": "op-end-form" },
      h("p", {}, `End table ${tableId}? A running hand is voided without payments; seats are released.`),
      reason,
      confirm,
      button("Cancel", "op-end-cancel", () => detail.replaceChildren()),
    ),
  );
}

// --- players ---------------------------------------------------------------------------------
function playersPanel(box: HTMLElement): void {
  const query = field("player id or display name", "op-find-q");
  const out = h("div", { "data-testid": "op-found" });
  const find = (): Promise<void> =>
    attempt(box, async () => {
      const q = query.value.trim();
      const byId = q.startsWith("p-");
      const r = await matchmaking.findPlayers(
        { playerId: byId ? q : "", displayName: byId ? "" : q, ledgerEntries: 10 },
        await auth(),
      );
      out.replaceChildren(
        ...(r.players.length ? r.players.map((d) => dossier(d, find)) : [h("p", {}, "Nobody found.")]),
      );
    });
  box.append(h("h3", {}, "Players"), query, button("Find", "op-find", () => void find()), out);
}

function dossier(d: PlayerDossier, refresh: () => Promise<void>): HTMLElement {
  const p = d.player!;
  const box = h("div", { class: "admin-dossier", "data-testid": "op-dossier", "data-player": p.playerId });
  const balances = `silver ${String(p.silver)} · 房卡 ${p.roomCards} · 加倍卡 ${String(p.doubleCards)} · 比赛卡 ${String(p.matchCards)}`;
  const suspended = d.suspension
    ? h(
        "p",
        { "data-testid": "op-suspended" },
        `Suspended by ${d.suspension.by}: ${d.suspension.reason} (until ${Number(d.suspension.untilUnixMs) ? when(d.suspension.untilUnixMs) : "lifted"})`,
      )
    : h("p", { "data-testid": "op-not-suspended" }, "Not suspended.");
  const sessions = d.sessions.map((s) =>
    h(
      "li",
      { "data-testid": "op-session" },
      `${s.sessionId} · since ${when(s.createdAtUnixMs)} · expires ${when(s.expiresAtUnixMs)} `,
      button("Revoke", "op-revoke", () =>
        void attempt(box, async () => {
          const reason = prompt("Why revoke this session?") ?? "";
          if (!reason.trim()) return;
          await matchmaking.revokeSession(
            { playerId: p.playerId, sessionId: s.sessionId, reason, requestId: requestId() },
            await auth(),
          );
          await refresh();
        }),
      ),
    ),
  );
  const reason = field("reason", "op-susp-reason");
  const until = h("input", { type: "datetime-local", "data-testid": "op-susp-until", "aria-label": "until (optional)" });
  const suspend = button("Suspend", "op-suspend", () =>
    void attempt(box, async () => {
      const untilMs = until.value ? BigInt(new Date(until.value).getTime()) : 0n;
      await matchmaking.suspendPlayer(
        { playerId: p.playerId, reason: reason.value.trim(), untilUnixMs: untilMs, requestId: requestId() },
        await auth(),
      );
      await refresh();
    }),
    "danger",
  );
  const lift = button("Lift suspension", "op-lift", () =>
    void attempt(box, async () => {
      await matchmaking.liftSuspension(
        { playerId: p.playerId, reason: reason.value.trim(), requestId: requestId() },
        await auth(),
      );
      await refresh();
    }),
  );
  box.append(
    h("h4", {}, `${p.displayName} · ${p.playerId}`),
    h("p", {}, `${p.issuer} #${p.subject} · ${p.level?.englishName ?? ""} · ${balances}`),
    suspended,
    h("p", {}, `Queued: ${d.queuedTicketId || "no"} · room: ${d.roomCode || "none"}`),
    h("p", {}, "Seats: ", d.seats.map((s) => `${s.tableId} (${s.tag}, seat ${s.seat - 1})`).join(", ") || "none"),
    h("p", {}, "Sessions:"),
    h("ul", {}, ...sessions),
    h("p", {}, "Last ledger entries:"),
    h("ul", { "data-testid": "op-ledger" }, ...d.lastEntries.map((e) => h("li", {}, `${when(e.recordedAtUnixMs)} ${e.tag || e.ref} ${String(e.amount)} ${e.note}`))),
    h("div", { class: "admin-filters" }, reason, until, suspend, lift),
  );
  return box;
}

// --- audit log -------------------------------------------------------------------------------
function auditPanel(box: HTMLElement): void {
  const list = h("table", { class: "admin-list", "data-testid": "op-audit-list" });
  const read = (): Promise<void> =>
    attempt(box, async () => {
      const rows = [];
      let after = 0n;
      do {
        const r = await matchmaking.listAuditLog({ afterSequence: after, limit: 500 }, await auth());
        rows.push(...r.entries);
        after = r.nextAfterSequence;
      } while (after);
      list.replaceChildren(
        h("tr", {}, ...["#", "when", "who", "what", "target", "why", "result"].map((c) => h("th", {}, c))),
        ...rows.reverse().map((e) =>
          h(
            "tr",
            { "data-testid": "op-audit-row", "data-action": e.action },
            ...[String(e.sequence), when(e.atUnixMs), e.actor, e.action, e.target, e.reason, e.result].map((c) => h("td", {}, c)),
          ),
        ),
      );
    });
  box.append(h("h3", {}, "Audit log"), button("Read the audit log", "op-audit-read", () => void read()), list);
}
