"""The operators' view of deploy/monitoring: the Prometheus alert rules pass ``promtool check
rules`` and their unit tests (``promtool test rules alerts.test.yml``: each alert fires on the
series that should raise it, and only then); the Grafana dashboard parses, its expressions are
valid PromQL, and every metric the rules and the dashboard name is one the services export
(read from the prometheus_client registry after importing every module that defines metrics).

promtool is Debian's ``prometheus`` package (``make promtool``, which ``make test`` runs);
without it these tests skip with the reason, and fail under ``CI=true``."""

from __future__ import annotations

import importlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from prometheus_client import REGISTRY

from tests.support.postgres import in_ci

ROOT = Path(__file__).resolve().parents[2]
MONITORING = ROOT / "deploy" / "monitoring"
ALERTS = MONITORING / "alerts.yml"
ALERT_TESTS = MONITORING / "alerts.test.yml"
DASHBOARD = MONITORING / "dashboard.json"


def _promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        why = "promtool is not installed (`make promtool`: Debian's prometheus package)"
        if in_ci():
            pytest.fail(f"{why}; CI=true: the alert rules must be checked", pytrace=False)
        pytest.skip(why)
    return path


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [_promtool(), *args], capture_output=True, text=True, timeout=120, cwd=MONITORING
    )


def _rules() -> list[dict]:
    return [r for g in yaml.safe_load(ALERTS.read_text())["groups"] for r in g["rules"]]


def _dashboard_exprs() -> list[str]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [t["expr"] for p in panels for t in p["targets"]]


# --- promtool ---------------------------------------------------------------------------------
def test_alert_rules_check():
    result = _run("check", "rules", str(ALERTS))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(_rules())} rules found" in result.stdout


def test_alert_rules_unit_tests():
    result = _run("test", "rules", str(ALERT_TESTS))
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_alert_has_a_case_where_it_fires_and_one_where_it_does_not():
    cases = [
        c for t in yaml.safe_load(ALERT_TESTS.read_text())["tests"] for c in t["alert_rule_test"]
    ]
    for rule in _rules():
        mine = [c for c in cases if c["alertname"] == rule["alert"]]
        assert any(c["exp_alerts"] for c in mine), f"{rule['alert']}: no case where it fires"
        assert any(not c["exp_alerts"] for c in mine), f"{rule['alert']}: no silent case"


def test_the_unit_tests_catch_a_changed_threshold(tmp_path):
    """promtool's unit tests are not vacuous: the memory alert at 95% instead of 90% no longer
    fires on 740 MB of 768 MiB, and the tests say so."""
    text = ALERTS.read_text()
    changed = text.replace('{resource="memory_bytes"} > 0.9', '{resource="memory_bytes"} > 0.95')
    assert changed != text
    (tmp_path / "alerts.yml").write_text(changed)
    (tmp_path / "alerts.test.yml").write_text(ALERT_TESTS.read_text())
    result = subprocess.run(
        [_promtool(), "test", "rules", "alerts.test.yml"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode != 0
    assert "MahjongMemoryNearLimit" in result.stdout + result.stderr


def test_dashboard_expressions_are_valid_promql(tmp_path):
    """Each expression as a recording rule, so ``promtool check rules`` parses it (Grafana's
    ``$__rate_interval`` as a fixed range)."""
    rules = [
        {"record": f"mahjong:dashboard:{i}", "expr": e.replace("$__rate_interval", "5m")}
        for i, e in enumerate(_dashboard_exprs())
    ]
    path = tmp_path / "dashboard-rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    result = _run("check", "rules", str(path))
    assert result.returncode == 0, result.stdout + result.stderr


# --- the metrics named are the metrics exported -------------------------------------------------
KEYWORDS = {"and", "or", "unless", "bool", "offset", "inf", "nan"}


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (strings, label matchers, ranges and
    label lists of by/without/on/ignoring/group_* removed; function names skipped)."""
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', expr)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", text):
        if text[m.end() :].lstrip().startswith("(") or m.group().lower() in KEYWORDS:
            continue
        names.add(m.group())
    return names


_SUFFIXES = {
    "counter": ("_total", "_created"),
    "gauge": ("",),
    "histogram": ("_bucket", "_sum", "_count", "_created"),
    "summary": ("", "_sum", "_count", "_created"),
    "info": ("_info",),
}


def exported_series() -> set[str]:
    """Every series name the services' processes export: each module of shared/ and services/
    that uses prometheus_client is imported, then the registry (with prometheus_client's
    process_* collector) is read."""
    for path in sorted([*(ROOT / "shared").rglob("*.py"), *(ROOT / "services").rglob("*.py")]):
        if "prometheus_client" in path.read_text(encoding="utf-8"):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            importlib.import_module(module)
    names = set()
    for family in REGISTRY.collect():
        names.update(family.name + s for s in _SUFFIXES.get(family.type, ("",)))
        names.update(s.name for s in family.samples)
    return names


def test_metric_names_are_read_from_expressions():
    expr = (
        'histogram_quantile(0.99, sum by (le, operation) (rate(a_seconds_bucket{x="y{z}"}'
        "[$__rate_interval]))) / ignoring (resource) b_limit > 0.9 and on (job) c_total"
    )
    assert metric_names(expr) == {"a_seconds_bucket", "b_limit", "c_total"}


def test_exported_series_hold_the_services_metrics():
    names = exported_series()
    for expected in (
        "grpc_server_handling_seconds_bucket",
        "mahjong_gateway_active_tables",
        "mahjong_store_operation_seconds_bucket",
        "mahjong_store_errors_total",
        "process_resident_memory_bytes",
    ):
        assert expected in names
    assert "mahjong_no_such_metric" not in names


@pytest.mark.parametrize("source", ["alerts", "dashboard"])
def test_expressions_name_only_exported_metrics(source):
    exprs = [r["expr"] for r in _rules()] if source == "alerts" else _dashboard_exprs()
    exported = exported_series()
    unknown = {n: e for e in exprs for n in metric_names(e) if n not in exported}
    assert not unknown, f"{source} names metrics no service exports: {unknown}"


def test_dashboard_shows_what_operators_watch():
    board = json.loads(DASHBOARD.read_text())
    assert board["uid"] and board["title"]
    exprs = "\n".join(_dashboard_exprs())
    for metric in (
        "mahjong_gateway_active_tables",  # tables live
        "mahjong_gateway_hands_total",  # hands per minute
        "mahjong_gateway_table_ownership_changes_total",  # takeovers
        "mahjong_store_operation_seconds_bucket",  # store latency
    ):
        assert metric in exprs, f"the dashboard does not show {metric}"
    act = [e for e in _dashboard_exprs() if 'grpc_method="Act"' in e and "histogram_quantile" in e]
    assert {e.split("(", 2)[1].split(",")[0] for e in act} == {"0.5", "0.99"}
    assert all('grpc_service="mahjong.gateway.v1.GatewayService"' in e for e in act)
    ids = [p["id"] for p in board["panels"]]
    assert len(ids) == len(set(ids))
    for panel in board["panels"]:
        assert panel["targets"] and all(t["expr"] for t in panel["targets"]), panel["title"]
