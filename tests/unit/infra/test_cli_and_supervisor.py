"""services.cli (the ``mahjong`` command and service discovery), infra.addresses and the pure
parts of infra.supervisor (process tests live in tests/integration)."""

from __future__ import annotations

import argparse
import json

import pytest

from infra import addresses, supervisor
from infra import ports as ports_mod
from infra.ports import PortFileError, ServedPorts
from services import cli
from tests.support.probes import refusing_address


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


def _served(name: str, port: int, internal: int = 0) -> supervisor.ServiceProcess:
    proc = supervisor.ServiceProcess(name)
    proc.served = ServedPorts(name, 1, "127.0.0.1", port, internal)
    return proc


def test_addr_flags_for_started_services_name_their_internal_ports():
    procs = {"wall": _served("wall", 1234), "gateway": _served("gateway", 2345, 2346)}
    assert supervisor.addr_flags(procs) == [
        "--wall-addr",
        "127.0.0.1:1234",
        "--gateway-addr",
        "127.0.0.1:2346",
    ]


def test_a_process_has_no_address_before_its_port_file_is_read():
    with pytest.raises(RuntimeError, match="wait_ready"):
        _ = supervisor.ServiceProcess("wall").address


def test_wait_for_serving_times_out_on_a_closed_port():
    with (
        refusing_address() as nowhere,
        pytest.raises(TimeoutError, match="not SERVING"),
    ):
        supervisor.wait_for_serving(nowhere, timeout=0.2)


def test_a_port_file_is_written_whole_and_read_back(tmp_path):
    ports = ServedPorts("gateway", 42, "127.0.0.1", 5001, 5002, 0, 5003, 5004, ("a.B",))
    path = tmp_path / "ports.json"
    assert ServedPorts.read(path) is None  # not written yet
    ports.write(path)
    assert ServedPorts.read(path) == ports
    assert [p.name for p in tmp_path.iterdir()] == ["ports.json"]  # no temporary file left
    doc = json.loads(path.read_text())
    assert doc["type"] == "mahjong.served-ports" and doc["version"] == 1
    assert doc["ports"] == {"grpc": 5001, "internal": 5002, "metrics": 5003, "web": 5004}
    path.write_text('{"type": "something else"}')
    with pytest.raises(PortFileError):
        ServedPorts.read(path)


@pytest.mark.parametrize(
    ("text", "port"), [("0", 0), ("50051", 50051), ("auto", ports_mod.AUTO_PORT), ("AUTO", -1)]
)
def test_port_flags_take_a_number_or_auto(text, port):
    assert ports_mod.port_value(text) == port
    assert ports_mod.port_flag(port) == text.lower()
    assert ports_mod.listen_port(port) == (0 if text.lower() == "auto" else port)


@pytest.mark.parametrize("text", ["-1", "65536", "any", ""])
def test_port_flags_refuse_anything_else(text):
    with pytest.raises(argparse.ArgumentTypeError):
        ports_mod.port_value(text)


def test_an_address_file_is_followed_as_it_changes(tmp_path):
    path = tmp_path / "wall.addr"
    book = addresses.AddressFile(path)
    assert book.address == "" and not book.refresh()  # not written yet
    assert addresses.write_address_file(path, ["127.0.0.1:1"]) == "127.0.0.1:1"
    assert book.refresh() and book.address == "127.0.0.1:1"
    assert not book.refresh()  # unchanged: nothing read
    target = addresses.write_address_file(path, ["127.0.0.1:1", "127.0.0.1:2"])
    assert target == "ipv4:127.0.0.1:1,127.0.0.1:2"
    assert book.refresh() and book.address == target
    addresses.write_address_file(path, [])  # none up now
    assert book.refresh() and book.address == ""
    flag = addresses.address_file_flag(path)
    assert addresses.is_address_file(flag) and addresses.AddressFile.of(flag).path == path
    assert addresses.AddressFile.of("127.0.0.1:1") is None


def test_stopping_a_process_that_never_started_is_harmless():
    assert supervisor.ServiceProcess("wall").stop() is None


def test_the_store_url_reaches_a_child_through_its_environment_not_its_command_line(
    monkeypatch, tmp_path
):
    """A PostgreSQL URL may hold a password, and ``ps`` shows command lines."""
    seen = {}

    class FakePopen:
        def __init__(self, cmd, env, **_):
            seen.update(cmd=cmd, env=env)

    monkeypatch.setattr(supervisor.subprocess, "Popen", FakePopen)
    url = "postgresql://mj:s3cret@db/mahjong"
    supervisor.ServiceProcess(
        "wall", store_url=url, internal_token="t", log_path=tmp_path / "wall.log"
    ).start()
    assert not any("s3cret" in part for part in seen["cmd"])
    assert "--store-url" not in seen["cmd"]
    assert seen["env"]["MAHJONG_WALL_STORE_URL"] == url
