"""Channels of the tests to the services they start, over the TLS every server runs: as one of
the deployment's workloads (mutual TLS with its development certificate, devkit.dev_ca) or as a
player (server TLS, trusting the development CA)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import grpc

from devkit import dev_ca
from infra.addresses import SERVICE_ORDER
from infra.supervisor import DEV_TLS_ROOT, ServiceProcess
from infra.tls import OPERATOR, TLSFiles, client_channel, dial

CA_FILE = str(DEV_TLS_ROOT / "ca.crt")


@functools.cache
def dev_certs(*workloads: str) -> None:
    """The development CA and a certificate for every service, the operator and ``workloads``
    (made or renewed once per test process)."""
    dev_ca.ensure([*SERVICE_ORDER, OPERATOR, *workloads], DEV_TLS_ROOT)


def files_of(workload: str) -> TLSFiles:
    """The development certificate of ``workload`` (made if missing)."""
    dev_certs(workload)
    return TLSFiles(DEV_TLS_ROOT / workload)


def as_workload(
    address: str, server: str, caller: str = "gateway", options: Sequence[tuple[str, Any]] = ()
) -> grpc.Channel:
    """A channel to service ``server`` at ``address`` presenting ``caller``'s certificate."""
    return dial(address, server, files_of(caller), options)


def to_process(proc: ServiceProcess, caller: str = "gateway") -> grpc.Channel:
    """A channel to a started service process as ``caller`` (its internal port if it has one)."""
    if proc.plaintext:
        return grpc.insecure_channel(proc.internal_address)
    return as_workload(proc.internal_address, proc.name, caller)


def as_player(address: str, options: Sequence[tuple[str, Any]] = ()) -> grpc.Channel:
    """A player's channel to a public port (the gateway's, matchmaking's)."""
    dev_certs()  # the CA exists
    return client_channel(address, options, ca_file=CA_FILE)
