"""The benchmark runner (``python -m tests.bench``): runs every module in order, goes on past
a failing one and exits non-zero at the end."""

from __future__ import annotations

import types

import pytest

from tests.bench import __main__ as runner


def fake(result):
    def main():
        if isinstance(result, Exception):
            raise result
        if result == "exit":
            raise SystemExit(3)
        return result

    return types.SimpleNamespace(main=main)


@pytest.fixture
def benches(monkeypatch):
    mods = {
        "bench_a": fake(0),
        "bench_b": fake(RuntimeError("boom")),
        "bench_c": fake(None),
        "bench_d": fake("exit"),
        "bench_e": fake(0),
    }
    ran: list[str] = []

    def import_module(name):
        short = name.rsplit(".", 1)[1]
        ran.append(short)
        return mods[short]

    monkeypatch.setattr(runner.importlib, "import_module", import_module)
    monkeypatch.setattr(runner, "modules", lambda only: sorted(mods))
    return ran


def test_runs_all_continues_past_failures_and_fails_at_the_end(benches, capsys):
    assert runner.main([]) == 1
    assert benches == ["bench_a", "bench_b", "bench_c", "bench_d", "bench_e"]
    out = capsys.readouterr()
    assert "=== bench_b: FAILED (1)" in out.out and "boom" in out.err
    assert "=== bench_d: FAILED (3)" in out.out
    assert "3/5 benchmarks ran" in out.out
    assert "failed: bench_b, bench_d" in out.err


def test_all_passing_exits_zero(monkeypatch, capsys):
    monkeypatch.setattr(runner.importlib, "import_module", lambda name: fake(0))
    monkeypatch.setattr(runner, "modules", lambda only: ["bench_x"])
    assert runner.main([]) == 0


def test_module_discovery_and_filter():
    names = runner.modules([])
    assert "bench_wall" in names and names == sorted(names)
    assert runner.modules(["wall"]) == ["bench_wall"]
    with pytest.raises(SystemExit, match="unknown benchmark area"):
        runner.modules(["nosuch"])
