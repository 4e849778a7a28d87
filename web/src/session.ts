// Who is playing: a session of matchmaking's, signed in with an ID token of the development
// issuer (a name) or as a guest, kept in localStorage (every tab of the origin shares it) and
// refreshed before it expires (RefreshSession rotates the refresh token: the newest one is
// written back at once, and tabs refresh one at a time, so another tab refreshing later reads
// it instead of presenting a spent one).

import type { Player, Session } from "./gen/mahjong/matchmaking/v1/matchmaking_pb";
import { apiError, devIdToken, matchmaking, requestId } from "./api";

export interface SignedIn {
  sessionToken: string;
  expiresAt: number; // unix ms
  refreshToken: string;
  refreshExpiresAt: number;
  issuedAt: number; // unix ms, when this page got it
  playerId: string;
  name: string;
  guest: boolean;
}

const KEY = "mahjong.session";
/** How long before its expiry a session token is refreshed: a minute, or a quarter of its
 * life when that is shorter. */
function early(s: SignedIn): number {
  return Math.min(60_000, (s.expiresAt - s.issuedAt) / 4);
}
let timer: ReturnType<typeof setTimeout> | undefined;

export function current(): SignedIn | null {
  try {
    const s = JSON.parse(localStorage.getItem(KEY) ?? "null") as SignedIn | null;
    return s && s.sessionToken && s.refreshExpiresAt > Date.now() ? s : null;
  } catch {
    return null;
  }
}

function keep(session: Session | undefined, player: Player | undefined): SignedIn {
  if (!session || !player) throw new Error("matchmaking answered no session");
  const s: SignedIn = {
    sessionToken: session.sessionToken,
    expiresAt: Number(session.expiresAtUnixMs),
    refreshToken: session.refreshToken,
    refreshExpiresAt: Number(session.refreshExpiresAtUnixMs),
    issuedAt: Date.now(),
    playerId: player.playerId,
    name: player.displayName,
    guest: player.guest,
  };
  localStorage.setItem(KEY, JSON.stringify(s));
  localStorage.setItem("mahjong.name", s.name);
  schedule(s);
  return s;
}

/** Sign ``name`` in: an ID token from the development issuer, then SignIn. */
export async function signIn(name: string): Promise<SignedIn> {
  const idToken = await devIdToken(name);
  const r = await matchmaking.signIn({ idToken, displayName: name, requestId: requestId() });
  return keep(r.session, r.player);
}

export async function signInAsGuest(name: string): Promise<SignedIn> {
  const r = await matchmaking.signInAsGuest({ displayName: name, requestId: requestId() });
  return keep(r.session, r.player);
}

/** A live session: the kept one, refreshed first when it is about to expire (null: signed out
 * or the refresh token spent or expired: sign in again). Another tab leading (lead below)
 * refreshes it; this one does only once the token has expired unrefreshed. */
export async function live(): Promise<SignedIn | null> {
  const s = current();
  if (!s) return null;
  if (s.expiresAt - Date.now() > early(s)) {
    schedule(s);
    return s;
  }
  if (!leading && s.expiresAt > Date.now()) return s;
  return refresh(s);
}

/** Whether this tab refreshes the session on its timer. One tab of the origin does: the one
 * holding the Web Lock "mahjong.session.leader", which it keeps for its life (the next tab in
 * line takes over when it closes or reloads). Tabs reading localStorage can see another tab's
 * write a moment late, so two tabs refreshing by turns could still present the same refresh
 * token; a single refresher never can. Without Web Locks (not a secure context) every tab
 * refreshes, one at a time where it can. */
let leading = !navigator.locks;

function lead(): void {
  if (!navigator.locks) return;
  void navigator.locks.request("mahjong.session.leader", () => {
    leading = true;
    const s = current();
    if (s) schedule(s);
    return new Promise<never>(() => undefined); // held until the tab goes
  });
  // a session signed in or out by another tab: the leader's timer follows it
  addEventListener("storage", (e) => {
    if (e.key !== KEY || !leading) return;
    const s = current();
    if (s) schedule(s);
    else clearTimeout(timer);
  });
}
lead();

/** Errors after which the same refresh token may work a moment later (a network drop, an
 * overloaded or restarting server); any other error means it never will. */
const TRANSIENT = new Set(["UNAVAILABLE", "DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED", "ABORTED", "UNKNOWN", "INTERNAL"]);
const RETRY_MS = 3000;

/** RefreshSession, one tab at a time (a Web Lock over the origin): two tabs presenting the same
 * refresh token would make the second a reuse, and reuse detection ends the whole session. In
 * the lock the kept session is read again, so a tab that waited takes the one just refreshed. A
 * transient failure keeps the session and tries again shortly; only a refusal signs out. */
async function refresh(s: SignedIn): Promise<SignedIn | null> {
  const run = async (): Promise<SignedIn | null> => {
    const kept = current();
    if (!kept) return null; // signed out meanwhile
    if (kept.refreshToken !== s.refreshToken) {
      schedule(kept); // another tab refreshed it
      return kept;
    }
    try {
      const r = await matchmaking.refreshSession({ refreshToken: kept.refreshToken });
      return keep(r.session, r.player);
    } catch (e) {
      if (TRANSIENT.has(apiError(e).code)) {
        clearTimeout(timer);
        timer = setTimeout(() => void refresh(kept), RETRY_MS);
        return kept.expiresAt > Date.now() ? kept : null;
      }
      forget(); // spent, revoked or expired: sign in again
      return null;
    }
  };
  return navigator.locks ? navigator.locks.request("mahjong.session.refresh", run) : run();
}

function schedule(s: SignedIn): void {
  clearTimeout(timer);
  if (!leading) return;
  const wait = Math.max(1000, s.expiresAt - Date.now() - early(s));
  timer = setTimeout(() => {
    const now = current();
    if (!now) return;
    if (now.refreshToken !== s.refreshToken) schedule(now); // refreshed by another tab
    else void refresh(now);
  }, Math.min(wait, 2 ** 31 - 1));
}

export async function signOut(): Promise<void> {
  const s = current();
  forget();
  if (s) await matchmaking.signOut({ sessionToken: s.sessionToken }).catch(() => undefined);
}

function forget(): void {
  clearTimeout(timer);
  localStorage.removeItem(KEY);
}
