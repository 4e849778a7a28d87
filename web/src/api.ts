// The gateway's client in the browser: GatewayService over Connect (default) or gRPC-Web
// (?protocol=grpc-web), both from @connectrpc/connect-web, on the messages generated from
// ../protos by buf. Errors carry the gRPC code and the google.rpc.ErrorInfo reason.

import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { GatewayService } from "./gen/mahjong/gateway/v1/gateway_pb";

const params = new URLSearchParams(location.search);

/** Where the gateway's web port is: ?api=, the build's VITE_GATEWAY_URL, else this page's. */
export const gatewayUrl: string =
  params.get("api") ??
  (import.meta.env.VITE_GATEWAY_URL as string | undefined) ??
  (import.meta.env.DEV ? "http://127.0.0.1:8054" : location.origin);

export const protocol = params.get("protocol") === "grpc-web" ? "grpc-web" : "connect";

const transport =
  protocol === "grpc-web"
    ? createGrpcWebTransport({ baseUrl: gatewayUrl })
    : createConnectTransport({ baseUrl: gatewayUrl, useBinaryFormat: true });

export const gateway: Client<typeof GatewayService> = createClient(GatewayService, transport);

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
  const err = ConnectError.from(e);
  const fatal = [Code.Unauthenticated, Code.PermissionDenied, Code.NotFound].includes(err.code);
  return { code: codeName(err.code), reason: reasonOf(err), message: err.rawMessage, fatal };
}

export function requestId(): string {
  return crypto.randomUUID();
}
