"""Start a service in-process on a loopback port for servicer tests (real gRPC, real port)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import grpc

from infra.config import Config, ServiceSpec
from infra.request_ids import with_request_ids
from infra.server import RunningServer, start
from infra.settings import declared
from infra.supervisor import DEV_TLS_ROOT
from infra.tls import TLSFiles, client_channel, dial
from tests.support.tls import dev_certs


@contextlib.contextmanager
def serving(
    spec: ServiceSpec, caller: str | None = None, **config
) -> Iterator[tuple[RunningServer, grpc.Channel]]:
    """``with serving(SPEC, store_url="memory://") as (server, channel): ...``

    The server runs TLS with its development certificate (``insecure=True`` for plaintext).
    ``channel`` calls it as ``caller``: a workload's name (mutual TLS with its certificate, on
    the internal port of a service that has one), or "" for a player (server TLS on the public
    port); by default the gateway for a service only services call, else a player."""
    _check_flags(spec, config.get("extra") or {})
    insecure = bool(config.get("insecure"))
    if not insecure:
        dev_certs(spec.name)
    cfg = Config(
        port=0,
        metrics_port=config.pop("metrics_port", 0),
        store_url=config.pop("store_url", "memory://"),
        tls_dir=config.pop("tls_dir", str(DEV_TLS_ROOT / spec.name)),
        **config,
    )
    server = start(spec, cfg)
    if caller is None:
        caller = "" if spec.default_internal_port else "gateway"
    channel = channel_to(server, spec.name, caller, insecure=insecure)
    try:
        yield server, channel
    finally:
        channel.close()
        server.stop(grace=0)


def channel_to(server: RunningServer, name: str, caller: str, *, insecure: bool = False):
    """A channel to the in-process ``server`` of service ``name`` as ``caller`` (see
    :func:`serving`); matchmaking's gives each call without a request id a new one
    (:mod:`infra.request_ids`: a client that never retries), :func:`raw_channel_to` none."""
    channel = raw_channel_to(server, name, caller, insecure=insecure)
    return with_request_ids(channel) if name == "matchmaking" else channel


def raw_channel_to(server: RunningServer, name: str, caller: str, *, insecure: bool = False):
    """:func:`channel_to` without request ids filled in."""
    if insecure:
        address = server.internal_address if caller else server.address
        return grpc.insecure_channel(address)
    if not caller:
        return client_channel(server.address, ca_file=str(DEV_TLS_ROOT / "ca.crt"))
    return dial(server.internal_address, name, TLSFiles(DEV_TLS_ROOT / caller))


def _check_flags(spec: ServiceSpec, extra: dict) -> None:
    """Refuse an ``extra`` key that is none of the service's own flags: the service would ignore
    it, and a test would run without the setting it names (a Config field such as ``store_url``
    goes beside ``extra``, not in it)."""
    own = {s.dest for s in declared(*spec.settings) if s.applies_to(spec)}
    unknown = sorted(set(extra) - own)
    if unknown:
        raise TypeError(f"the {spec.name} service has no flag {', '.join(unknown)}")
