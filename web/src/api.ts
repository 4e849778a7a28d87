// The services the page calls: the gateway's GatewayService (the table) and matchmaking's
// MatchmakingService (sign-in, rooms), each on its web port over Connect (default) or gRPC-Web
// (?protocol=grpc-web), both from @connectrpc/connect-web, on the messages generated from
// ../protos by buf; and the development issuer's /token (an ID token for a name). Errors carry
// the gRPC code and the google.rpc.ErrorInfo reason.

import { Code, ConnectError, createClient, type CallOptions, type Client, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { GatewayService, type StreamHeartbeat, type SubscribeResponse } from "./gen/mahjong/gateway/v1/gateway_pb";
import { MatchmakingService } from "./gen/mahjong/matchmaking/v1/matchmaking_pb";

const params = new URLSearchParams(location.search);
const env = import.meta.env as Record<string, string | undefined>;

/** The page's host on another port of `mahjong run` (the gateway serves the page on 8054,
 * matchmaking's web port is 8055, the development issuer 8059). */
function sibling(port: number, scheme = location.protocol): string {
  return `${scheme}//${location.hostname || "127.0.0.1"}:${port}`;
}

/** Where the gateway's web port is: ?api=, the build's VITE_GATEWAY_URL, else this page's. */
export const gatewayUrl: string =
  params.get("api") ?? env.VITE_GATEWAY_URL ?? (import.meta.env.DEV ? "http://127.0.0.1:8054" : location.origin);

/** Matchmaking's web port: ?matchmaking=, VITE_MATCHMAKING_URL, else port 8055 of this host. */
export const matchmakingUrl: string =
  params.get("matchmaking") ?? env.VITE_MATCHMAKING_URL ?? (import.meta.env.DEV ? "http://127.0.0.1:8055" : sibling(8055));

/** The development issuer (mahjong run's): ?issuer=, VITE_ISSUER_URL, else port 8059 (http). */
export const issuerUrl: string = params.get("issuer") ?? env.VITE_ISSUER_URL ?? sibling(8059, "http:");

export const protocol = params.get("protocol") === "grpc-web" ? "grpc-web" : "connect";

function transport(baseUrl: string): Transport {
  return protocol === "grpc-web"
    ? createGrpcWebTransport({ baseUrl })
    : createConnectTransport({ baseUrl, useBinaryFormat: true });
}

export const gateway: Client<typeof GatewayService> = createClient(GatewayService, transport(gatewayUrl));
export const matchmaking: Client<typeof MatchmakingService> = createClient(MatchmakingService, transport(matchmakingUrl));

export interface ApiError {
  code: string; // "PERMISSION_DENIED"
  reason: string; // ErrorInfo.reason, e.g. "NOT_YOUR_TURN"
  message: string;
  fatal: boolean; // the seat or table cannot be used with this token
}

const ERROR_INFO = "google.rpc.ErrorInfo";

/** ErrorInfo.reason (field 1) of an error's details, read with protobuf-es's wire reader. */
function reasonOf(err: ConnectError): string {
  for (const d of err.details) {
    if ("desc" in d || d.type !== ERROR_INFO) continue;
    const r = new BinaryReader(d.value);
    while (r.pos < r.len) {
      const [field, wire] = r.tag();
      if (field === 1) return r.string();
      r.skip(wire);
    }
  }
  return "";
}

function codeName(code: Code): string {
  return Code[code].replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

export function apiError(e: unknown): ApiError {
  if (e instanceof IssuerError) return { code: "UNAVAILABLE", reason: "ISSUER", message: e.message, fatal: false };
  const err = ConnectError.from(e);
  const fatal = [Code.Unauthenticated, Code.PermissionDenied, Code.NotFound].includes(err.code);
  return { code: codeName(err.code), reason: reasonOf(err), message: err.rawMessage, fatal };
}

export function requestId(): string {
  return crypto.randomUUID();
}

export class IssuerError extends Error {}

// --- a paused gateway replica (README "Client API": the paused-replica rules) -----------------
// No server answers from a frozen process, so the page does not wait on one: its stream asks
// for heartbeats and is given up once silent too long; each call's try ends after the lease and
// a second, and one unanswered after half the lease is sent again (the same request, so the same
// request id: the gateway applies it once), the first answer winning. The browser picks the
// connection; behind the load balancer a new request reaches a replica that answers.

/** The gateway's table lease as the page knows it: the default until a heartbeat names it. */
export const lease = { ms: 30_000, intervalMs: 10_000 };

function heard(hb: StreamHeartbeat): void {
  if (hb.leaseMs > 0n) {
    lease.ms = Number(hb.leaseMs);
    lease.intervalMs = Number(hb.intervalMs) || lease.ms / 3;
  }
}

/** How long a stream may stay silent: the lease and a second, or two heartbeats and a second. */
function silenceMs(): number {
  return Math.min(lease.ms, 2 * lease.intervalMs) + 1000;
}

/** A Subscribe stream (``open``, asked with heartbeats: true) without its heartbeats, aborted
 * (Code.Canceled, not fatal: resume from the last event) once silent for silenceMs(). */
export async function* watched(
  open: (options: CallOptions) => AsyncIterable<SubscribeResponse>,
): AsyncGenerator<SubscribeResponse> {
  const abort = new AbortController();
  let timer = 0;
  const listen = () => {
    clearTimeout(timer);
    timer = window.setTimeout(() => abort.abort(), silenceMs());
  };
  listen();
  try {
    for await (const r of open({ signal: abort.signal })) {
      listen();
      if (r.heartbeat) heard(r.heartbeat);
      else yield r;
    }
  } finally {
    clearTimeout(timer);
  }
}

const TRANSIENT = [Code.Unavailable, Code.DeadlineExceeded];

/** A gateway call (``call`` with the options of one try; its request, id included, the same each
 * time): tries of the lease and a second at most, another sent after half the lease unanswered
 * or at once after UNAVAILABLE / DEADLINE_EXCEEDED, the first answer winning, within overallMs. */
export function hedged<T>(call: (options: CallOptions) => Promise<T>, overallMs = 25_000): Promise<T> {
  const end = Date.now() + overallMs;
  const tries: AbortController[] = [];
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let pending = 0;
    let timer = 0;
    let lastError: unknown = new Error("no answer in time");
    const finish = (f: () => void) => {
      settled = true;
      clearTimeout(timer);
      for (const t of tries) t.abort();
      f();
    };
    const again = (ms: number) => {
      clearTimeout(timer);
      timer = window.setTimeout(() => {
        if (settled) return;
        if (Date.now() < end) return launch();
        // out of time: refused once no try is under way, never left waiting for ever
        if (pending === 0) finish(() => reject(lastError));
      }, ms);
    };
    function launch(): void {
      const abort = new AbortController();
      tries.push(abort);
      pending += 1;
      const timeoutMs = Math.max(50, Math.min(lease.ms + 1000, end - Date.now()));
      call({ signal: abort.signal, timeoutMs }).then(
        (r) => {
          pending -= 1;
          if (!settled) finish(() => resolve(r));
        },
        (e: unknown) => {
          pending -= 1;
          if (settled) return;
          lastError = e;
          if (!TRANSIENT.includes(ConnectError.from(e).code)) return finish(() => reject(e));
          if (Date.now() >= end) {
            if (pending === 0) finish(() => reject(e));
            return;
          }
          again(100);
        },
      );
      again(lease.ms / 2);
    }
    launch();
  });
}

/** An OpenID Connect ID token for ``name`` from the development issuer (no password: a
 * development stack only; a studio's page gets its token from the studio's login instead). */
export async function devIdToken(name: string): Promise<string> {
  let resp: Response;
  try {
    resp = await fetch(`${issuerUrl}/token?name=${encodeURIComponent(name)}`, { cache: "no-store" });
  } catch (e) {
    throw new IssuerError(`the development issuer at ${issuerUrl} does not answer (${String(e)})`);
  }
  const body = (await resp.json().catch(() => ({}))) as { id_token?: string; error?: string };
  if (!resp.ok || !body.id_token) throw new IssuerError(body.error ?? `the issuer answered ${resp.status}`);
  return body.id_token;
}
