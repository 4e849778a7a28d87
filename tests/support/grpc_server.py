"""Start a service in-process on a loopback port for servicer tests (real gRPC, real port)."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator

import grpc

from shared.server import Config, RunningServer, ServiceSpec, start


@contextlib.contextmanager
def serving(spec: ServiceSpec, **config) -> Iterator[tuple[RunningServer, grpc.Channel]]:
    """``with serving(SPEC, store_url="memory://") as (server, channel): ...``"""
    _check_flags(spec, config.get("extra") or {})
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


def _check_flags(spec: ServiceSpec, extra: dict) -> None:
    """Refuse an ``extra`` key that is none of the service's own flags: the service would ignore
    it, and a test would run without the setting it names (a Config field such as ``store_url``
    goes beside ``extra``, not in it)."""
    parser = argparse.ArgumentParser(add_help=False)  # "help" is no flag of the service
    if spec.add_arguments:
        spec.add_arguments(parser)
    unknown = sorted(set(extra) - {a.dest for a in parser._actions})
    if unknown:
        raise TypeError(f"the {spec.name} service has no flag {', '.join(unknown)}")
