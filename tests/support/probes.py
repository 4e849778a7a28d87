"""Probes every service test uses: grpc health, reflection, Prometheus /metrics, the status
and ErrorInfo of a failed call, waiting for a condition, and an address nothing answers at."""

from __future__ import annotations

import contextlib
import re
import socket
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import TypeVar

import grpc
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_status import rpc_status

T = TypeVar("T")


def health_status(channel: grpc.Channel, service: str = "") -> str:
    """``SERVING``, ``NOT_SERVING``, … for ``service`` ("" = the whole server)."""
    resp = health_pb2_grpc.HealthStub(channel).Check(
        health_pb2.HealthCheckRequest(service=service), timeout=5
    )
    return health_pb2.HealthCheckResponse.ServingStatus.Name(resp.status)


def list_services(channel: grpc.Channel) -> list[str]:
    """Service names the server lists through grpc reflection."""
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    responses = stub.ServerReflectionInfo(iter([request]), timeout=5)
    return sorted(s.name for r in responses for s in r.list_services_response.service)


def file_containing_symbol(channel: grpc.Channel, symbol: str) -> list[bytes]:
    """Serialized FileDescriptorProtos reflection returns for a symbol (empty if unknown)."""
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    request = reflection_pb2.ServerReflectionRequest(file_containing_symbol=symbol)
    out: list[bytes] = []
    for r in stub.ServerReflectionInfo(iter([request]), timeout=5):
        out.extend(r.file_descriptor_response.file_descriptor_proto)
    return out


def fetch_metrics(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        return resp.read().decode()


def metric_value(text: str, name: str, **labels: str) -> float:
    """The value of the sample ``name`` whose labels include ``labels`` (0 when absent)."""
    total = 0.0
    for line in text.splitlines():
        m = re.match(r"^([a-zA-Z_:][\w:]*)(\{(.*)\})?\s+(\S+)$", line)
        if not m or m.group(1) != name:
            continue
        have = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        if all(have.get(k) == v for k, v in labels.items()):
            total += float(m.group(4))
    return total


def rpc_error(fn) -> tuple[grpc.StatusCode, str, error_details_pb2.ErrorInfo]:
    """Call ``fn`` expecting it to fail with a gRPC error; returns the status code, the message
    and the ``google.rpc.ErrorInfo`` detail (empty when the server sent none)."""
    try:
        fn()
    except grpc.RpcError as exc:
        return exc.code(), exc.details(), error_info(exc)
    raise AssertionError("the call succeeded; an error was expected")


def error_info(exc: grpc.RpcError) -> error_details_pb2.ErrorInfo:
    """The ``google.rpc.ErrorInfo`` detail of a gRPC error (empty when the server sent none)."""
    status = rpc_status.from_call(exc)
    info = error_details_pb2.ErrorInfo()
    if status and status.details:
        status.details[0].Unpack(info)
    return info


def wait_for(
    predicate: Callable[[], T | None],
    timeout: float,
    what: str,
    logs: Callable[[], str] = lambda: "",
    every: float = 0.1,
) -> T:
    """``predicate()``'s first true value, asked every ``every`` seconds (a call failing with
    an RpcError counts as not yet); after ``timeout`` seconds an AssertionError naming ``what``
    with ``logs()`` (the services' log tails)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(grpc.RpcError):
            value = predicate()
            if value:
                return value
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}\n{logs()}")


@contextlib.contextmanager
def refusing_address() -> Iterator[str]:
    """A loopback address where nothing answers while the block runs: a port this process holds
    bound without listening on it, so a connection is refused and no other process can take
    the port meanwhile (a port merely found free could be taken before it is used)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield f"127.0.0.1:{s.getsockname()[1]}"
