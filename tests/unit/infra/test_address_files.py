"""Address files (infra/addresses.py, ``--wall-addr @PATH``): a channel dialled at one follows
the file on every call — to the server it names now, after a rewrite; UNAVAILABLE while it names
none — over real loopback servers, plaintext and mutual TLS."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent import futures

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from infra.addresses import address_file_flag, write_address_file
from infra.tls import AddressUnknown, TLSFiles, dial, server_credentials
from tests.support.tls import files_of

ROUND_ROBIN = [("grpc.lb_policy_name", "round_robin")]


@contextlib.contextmanager
def named_server(name: str, tls: TLSFiles | None) -> Iterator[str]:
    """A server whose health knows only the service ``name``; yields its address."""
    server = grpc.server(futures.ThreadPoolExecutor(2))
    servicer = health.HealthServicer()
    servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    if tls is None:
        port = server.add_insecure_port("127.0.0.1:0")
    else:
        port = server.add_secure_port("127.0.0.1:0", server_credentials(tls, mutual=True))
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(0)


def answers(channel: grpc.Channel, name: str) -> bool:
    """Whether the server ``channel`` reaches now knows the service ``name``."""
    stub = health_pb2_grpc.HealthStub(channel)
    try:
        stub.Check(health_pb2.HealthCheckRequest(service=name), timeout=5)
    except grpc.RpcError as exc:
        if exc.code() == grpc.StatusCode.NOT_FOUND:
            return False
        raise
    return True


@pytest.mark.parametrize("secure", [False, True], ids=["plaintext", "mutual-tls"])
def test_a_channel_on_an_address_file_follows_it(tmp_path, secure):
    path = tmp_path / "wall.addr"
    server_tls = files_of("wall") if secure else None
    caller = files_of("gateway") if secure else None
    with (
        named_server("first", server_tls) as first,
        named_server("second", server_tls) as second,
        dial(address_file_flag(path), "wall", caller, ROUND_ROBIN) as channel,
    ):
        stub = health_pb2_grpc.HealthStub(channel)
        with pytest.raises(grpc.RpcError) as err:  # not written yet: as a server not up yet
            stub.Check(health_pb2.HealthCheckRequest(), timeout=5)
        assert isinstance(err.value, AddressUnknown)
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE and str(path) in err.value.details()

        write_address_file(path, [first])
        assert answers(channel, "first") and not answers(channel, "second")
        write_address_file(path, [second])  # the next call goes to the new address
        assert answers(channel, "second") and not answers(channel, "first")
        write_address_file(path, [first, second])  # a list: round robin over both
        seen = set()
        for _ in range(100):  # until both are connected and called
            seen.add(answers(channel, "first"))
            if len(seen) == 2:
                break
        assert seen == {True, False}
        write_address_file(path, [])  # none up now
        with pytest.raises(grpc.RpcError) as err:
            stub.Check(health_pb2.HealthCheckRequest(), timeout=5)
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
