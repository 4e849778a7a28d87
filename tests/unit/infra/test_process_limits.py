"""The container's limits read from cgroup files (infra/process_limits.py), v2 and v1, and
no series where there is no limit."""

from __future__ import annotations

from prometheus_client import REGISTRY

from infra.process_limits import cpu_limit, export_limits, memory_limit


def _write(root, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")


def test_cgroup_v2_limits(tmp_path):
    _write(tmp_path, {"memory.max": "805306368", "cpu.max": "150000 100000"})
    assert memory_limit(tmp_path) == 805306368
    assert cpu_limit(tmp_path) == 1.5


def test_cgroup_v2_without_limits(tmp_path):
    _write(tmp_path, {"memory.max": "max", "cpu.max": "max 100000"})
    assert memory_limit(tmp_path) is None
    assert cpu_limit(tmp_path) is None


def test_cgroup_v1_limits_and_their_unlimited_values(tmp_path):
    limited, unlimited = tmp_path / "a", tmp_path / "b"
    _write(
        limited,
        {
            "memory/memory.limit_in_bytes": "268435456",
            "cpu/cpu.cfs_quota_us": "50000",
            "cpu/cpu.cfs_period_us": "100000",
        },
    )
    _write(
        unlimited,
        {
            "memory/memory.limit_in_bytes": "9223372036854771712",
            "cpu/cpu.cfs_quota_us": "-1",
            "cpu/cpu.cfs_period_us": "100000",
        },
    )
    assert (memory_limit(limited), cpu_limit(limited)) == (268435456, 0.5)
    assert (memory_limit(unlimited), cpu_limit(unlimited)) == (None, None)
    assert (memory_limit(tmp_path / "none"), cpu_limit(tmp_path / "none")) == (None, None)


def test_exported_as_gauges(tmp_path):
    _write(tmp_path, {"memory.max": "1073741824", "cpu.max": "200000 100000"})
    export_limits(tmp_path)
    value = REGISTRY.get_sample_value
    assert value("mahjong_container_limit", {"resource": "memory_bytes"}) == 1073741824
    assert value("mahjong_container_limit", {"resource": "cpu_cores"}) == 2.0
