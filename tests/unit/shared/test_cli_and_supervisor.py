"""services.cli (the ``mahjong`` command and service discovery), shared.addresses and the pure
parts of shared.supervisor (process tests live in tests/integration)."""

from __future__ import annotations

import socket

import pytest

from services import cli
from shared import addresses, supervisor


def test_every_service_with_a_server_module_is_servable():
    found = cli.servable()
    assert "wall" in found
    for name, module in found.items():
        assert module.SPEC.name == name
        assert module.SPEC.default_port == addresses.DEFAULT_PORTS[name][0]


def test_serve_unknown_service_is_a_clear_error(capsys):
    assert cli.main(["serve", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert "unknown service 'nosuch'" in err and "wall" in err


def test_service_subcommands_are_discovered():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert {"serve", "run", "verify-wall", "wall"} <= set(sub.choices)


def test_default_addresses_and_env_override(monkeypatch):
    monkeypatch.delenv("MAHJONG_WALL_ADDR", raising=False)
    assert addresses.default_address("wall") == "127.0.0.1:50051"
    monkeypatch.setenv("MAHJONG_WALL_ADDR", "dns:///wall:50051")
    assert addresses.default_address("wall") == "dns:///wall:50051"
    ports = [p for pair in addresses.DEFAULT_PORTS.values() for p in pair]
    assert len(ports) == len(set(ports))  # no two services share a port
    assert addresses.SERVICE_ORDER[0] == "wall"


def test_free_port_is_bindable():
    port = supervisor.free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def test_addr_flags_for_started_services():
    procs = {
        "wall": supervisor.ServiceProcess("wall", 1234, 0, "memory://"),
        "rules": supervisor.ServiceProcess("rules", 2345, 0, "memory://"),
    }
    assert supervisor.addr_flags(procs) == [
        "--wall-addr",
        "127.0.0.1:1234",
        "--rules-addr",
        "127.0.0.1:2345",
    ]


def test_wait_for_serving_times_out_on_a_closed_port():
    with pytest.raises(TimeoutError, match="not SERVING"):
        supervisor.wait_for_serving(f"127.0.0.1:{supervisor.free_port()}", timeout=0.2)


def test_stopping_a_process_that_never_started_is_harmless():
    assert supervisor.ServiceProcess("wall", 1, 0, "memory://").stop() is None


def test_the_store_url_reaches_a_child_through_its_environment_not_its_command_line(
    monkeypatch,
):
    """A PostgreSQL URL may hold a password, and ``ps`` shows command lines."""
    seen = {}

    class FakePopen:
        def __init__(self, cmd, env, **_):
            seen.update(cmd=cmd, env=env)

    monkeypatch.setattr(supervisor.subprocess, "Popen", FakePopen)
    url = "postgresql://mj:s3cret@db/mahjong"
    supervisor.ServiceProcess("wall", 1, 2, url, internal_token="t").start()
    assert not any("s3cret" in part for part in seen["cmd"])
    assert "--store-url" not in seen["cmd"]
    assert seen["env"]["MAHJONG_WALL_STORE_URL"] == url
