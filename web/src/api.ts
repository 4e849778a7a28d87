// The services the page calls: the gateway's GatewayService (the table) and matchmaking's
// MatchmakingService (sign-in, rooms), each on its web port over Connect (default) or gRPC-Web
// (?protocol=grpc-web), both from @connectrpc/connect-web, on the messages generated from
// ../protos by buf; and the development issuer's /token (an ID token for a name). Errors carry
// the gRPC code and the google.rpc.ErrorInfo reason.

import { Code, ConnectError, createClient, type Client, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { GatewayService } from "./gen/mahjong/gateway/v1/gateway_pb";
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
