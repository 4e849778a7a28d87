"""The container's limits as Prometheus gauges, beside prometheus_client's own ``process_*``
metrics (resident memory, CPU seconds, open file descriptors), so that an alert can say "a
replica near its limits" from the service's own scrape:

``mahjong_container_limit{resource}``: ``resource="memory_bytes"``, the cgroup's memory limit
(a Pod's ``resources.limits.memory``), and ``resource="cpu_cores"``, its CPU quota in cores
(``limits.cpu``). Read once at start from cgroup v2 (``memory.max``, ``cpu.max``) or v1
(``memory.limit_in_bytes``, ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``); a resource without
a limit (or without a cgroup file) has no series, so no alert compares against a limit that
does not exist.
"""

from __future__ import annotations

from pathlib import Path

from prometheus_client import Gauge

LIMITS = Gauge(
    "mahjong_container_limit",
    "The container's limits from its cgroup: memory_bytes, cpu_cores (absent: no limit).",
    ["resource"],
)

# cgroup v1 reports "no limit" as a huge page-aligned number rather than "max".
_UNLIMITED_V1 = 1 << 62


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def memory_limit(root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """The memory limit in bytes, or None (unlimited, or not in a cgroup this reads)."""
    v2 = _read(root / "memory.max")
    if v2 is not None:
        return None if v2 == "max" else int(v2)
    v1 = _read(root / "memory" / "memory.limit_in_bytes")
    if v1 is None or int(v1) >= _UNLIMITED_V1:
        return None
    return int(v1)


def cpu_limit(root: Path = Path("/sys/fs/cgroup")) -> float | None:
    """The CPU quota in cores, or None (unlimited, or not in a cgroup this reads)."""
    v2 = _read(root / "cpu.max")
    if v2 is not None:
        quota, _, period = v2.partition(" ")
        return None if quota == "max" else int(quota) / int(period or 100_000)
    quota_v1 = _read(root / "cpu" / "cpu.cfs_quota_us")
    period_v1 = _read(root / "cpu" / "cpu.cfs_period_us")
    if quota_v1 is None or period_v1 is None or int(quota_v1) < 0:
        return None
    return int(quota_v1) / int(period_v1)


def export_limits(root: Path = Path("/sys/fs/cgroup")) -> None:
    """Set the gauges from the cgroup under ``root`` (those without a limit stay unset)."""
    memory = memory_limit(root)
    if memory is not None:
        LIMITS.labels("memory_bytes").set(memory)
    cpu = cpu_limit(root)
    if cpu is not None:
        LIMITS.labels("cpu_cores").set(cpu)
