"""Start a service in-process on a loopback port for servicer tests (real gRPC, real port)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import grpc

from shared.server import Config, RunningServer, ServiceSpec, start


@contextlib.contextmanager
def serving(spec: ServiceSpec, **config) -> Iterator[tuple[RunningServer, grpc.Channel]]:
    """``with serving(SPEC, store_url="memory://") as (server, channel): ...``"""
    cfg = Config(
        port=0,
        metrics_port=config.pop("metrics_port", 0),
        store_url=config.pop("store_url", "memory://"),
        **config,
    )
    server = start(spec, cfg)
    channel = grpc.insecure_channel(server.address)
    try:
        yield server, channel
    finally:
        channel.close()
        server.stop(grace=0)
