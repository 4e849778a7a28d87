"""``mahjong run`` / ``mahjong serve`` say what is wrong in one line instead of a traceback or
a silent wait."""

from __future__ import annotations

import socket

import pytest

from infra import server, supervisor
from infra.server import serve
from services import cli
from services.rules.server import SPEC


def test_run_with_an_unknown_service_name_is_an_error_not_an_empty_stack(capsys):
    # Before: "all services SERVING" and a wait for Ctrl-C, with nothing started.
    assert cli.main(["run", "--only", "walll", "--store-url", "memory://"]) == 2
    err = capsys.readouterr().err
    assert "walll" in err and "wall" in err


def test_serve_on_a_port_in_use_names_the_port(monkeypatch):
    # Before: a RuntimeError traceback from grpc ("Failed to bind ... GRPC_VERBOSITY").
    # (serve() points structlog at this test's captured stderr: keep the global config)
    monkeypatch.setattr(server, "configure_logging", lambda *_a, **_k: None)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        argv = ["--port", str(port), "--metrics-port", "0", "--store-url", "memory://"]
        with pytest.raises(SystemExit) as exit_:
            serve(SPEC, [*argv, "--insecure"])
    message = str(exit_.value.code)
    assert f"127.0.0.1:{port}" in message and "--port" in message


def test_serve_without_certificates_says_where_it_looked(monkeypatch, tmp_path):
    monkeypatch.setattr(server, "configure_logging", lambda *_a, **_k: None)
    argv = ["--port", "0", "--metrics-port", "0", "--store-url", "memory://"]
    with pytest.raises(SystemExit) as exit_:
        serve(SPEC, [*argv, "--tls-dir", str(tmp_path)])
    message = str(exit_.value.code)
    assert f"no tls.crt in {tmp_path}" in message and "--insecure" in message


def test_run_reports_a_service_that_failed_to_start_in_one_line(monkeypatch, capsys):
    def failing(*_args, **_kwargs):
        raise supervisor.StartupError("rules exited with 1 at start-up")

    monkeypatch.setattr(supervisor, "run_all", failing)
    assert cli.main(["run", "--store-url", "memory://"]) == 1
    assert "rules exited with 1 at start-up" in capsys.readouterr().err
