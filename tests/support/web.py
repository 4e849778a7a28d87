"""Calling the gateway the way browsers do, from tests: the same GatewayService methods over
Connect or gRPC-Web on the gateway's web port (PyPI connectrpc's client), beside the gRPC stub,
with one shape of outcome for all three (:func:`outcome`) so tests compare them directly."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import grpc
from connectrpc.client import ConnectClientSync
from connectrpc.compat import google_protobuf_binary_codec
from connectrpc.errors import ConnectError
from connectrpc.protocol import ProtocolType
from google.rpc import error_details_pb2, status_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb
from mahjong.gateway.v1 import gateway_pb2_grpc

from infra.web_calls import method_infos
from tests.support.tls import as_player

METHODS = method_infos(pb.DESCRIPTOR.services_by_name["GatewayService"])
PROTOCOLS = {"connect": ProtocolType.CONNECT, "grpc-web": ProtocolType.GRPC_WEB}


@dataclass(frozen=True)
class Outcome:
    """How a call ended: ``OK`` or the status code's name, the ErrorInfo reason, the message."""

    code: str
    reason: str = ""
    message: str = ""


class WebGateway:
    """GatewayService over one web protocol; ``gw.Act(request)`` as with the gRPC stub."""

    def __init__(self, url: str, protocol: str, headers: Mapping[str, str] | None = None) -> None:
        self.client = ConnectClientSync(
            url, codec=google_protobuf_binary_codec(), protocol=PROTOCOLS[protocol]
        )
        self.headers = dict(headers or {})

    def __getattr__(self, name: str) -> Callable[..., Any]:
        info = METHODS[name]

        def call(request, metadata: Mapping[str, str] | None = None, timeout_ms: int = 10_000):
            headers = {**self.headers, **(metadata or {})}
            if name == "Subscribe":
                return self.client.execute_server_stream(
                    request=request, method=info, headers=headers, timeout_ms=timeout_ms
                )
            return self.client.execute_unary(
                request=request, method=info, headers=headers, timeout_ms=timeout_ms
            )

        return call

    def close(self) -> None:
        self.client.close()


class GrpcGateway:
    """The gRPC stub with the same call shape as :class:`WebGateway` (metadata as a mapping)."""

    def __init__(self, address: str, channel: grpc.Channel | None = None) -> None:
        self.channel = channel or as_player(address)  # a player, over the public port's TLS
        self.stub = gateway_pb2_grpc.GatewayServiceStub(self.channel)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.stub, name)

        def call(request, metadata: Mapping[str, str] | None = None, timeout_ms: int = 10_000):
            pairs = tuple((metadata or {}).items())
            return method(request, metadata=pairs, timeout=timeout_ms / 1e3)

        return call

    def close(self) -> None:
        self.channel.close()


def _reason(details: list[tuple[str, bytes]]) -> str:
    for type_url, value in details:
        if type_url.endswith("google.rpc.ErrorInfo"):
            return error_details_pb2.ErrorInfo.FromString(value).reason
    return ""


def outcome(call: Callable[[], Any]) -> Outcome:
    """Run ``call`` (a unary call, or a stream read to its first item) and say how it ended."""
    try:
        result = call()
        if isinstance(result, Iterator):
            next(result, None)
    except ConnectError as exc:
        code = exc.code.name.replace("CANCELED", "CANCELLED")
        details = [(d.type_name, d.message_bytes) for d in exc.details]
        return Outcome(code, _reason(details), exc.message)
    except grpc.RpcError as exc:
        status = next(
            (v for k, v in exc.trailing_metadata() or () if k == "grpc-status-details-bin"), None
        )
        details = []
        if status is not None:
            details = [(d.type_url, d.value) for d in status_pb2.Status.FromString(status).details]
        return Outcome(exc.code().name, _reason(details), exc.details())
    return Outcome("OK")
