// Who is playing: a session of matchmaking's, signed in with an ID token of the development
// issuer (a name) or as a guest, kept in localStorage (every tab of the origin shares it) and
// refreshed before it expires (RefreshSession rotates the refresh token: the newest one is
// written back at once, so another tab refreshing later reads it instead of a spent one).

import type { Player, Session } from "./gen/mahjong/matchmaking/v1/matchmaking_pb";
import { devIdToken, matchmaking, requestId } from "./api";

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
 * or the refresh token spent or expired: sign in again). */
export async function live(): Promise<SignedIn | null> {
  const s = current();
  if (!s) return null;
  if (s.expiresAt - Date.now() > early(s)) {
    schedule(s);
    return s;
  }
  return refresh(s);
}

async function refresh(s: SignedIn): Promise<SignedIn | null> {
  try {
    const r = await matchmaking.refreshSession({ refreshToken: s.refreshToken });
    return keep(r.session, r.player);
  } catch {
    const now = current(); // another tab may have refreshed it meanwhile
    if (now && now.refreshToken !== s.refreshToken) return now;
    forget();
    return null;
  }
}

function schedule(s: SignedIn): void {
  clearTimeout(timer);
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
