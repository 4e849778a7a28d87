"""The image ``make image`` built: its size, and the time from ``podman run`` to grpc health
SERVING for each service, started as the dev overlay (the embedded layout: SQLite on a volume
of its own, no PostgreSQL to reach) starts it, with the manifests' user, read-only root and
mounts (tests/image/podman.py), one after another in the order ``mahjong run`` uses, in
``ROUNDS`` fresh stacks. Goals: ≤ 250 MB, every service SERVING in ≤ 3 s.

Without podman or the image it says why and skips (fails under ``CI=true``).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import tempfile
from pathlib import Path

from infra.addresses import SERVICE_ORDER
from tests.image import podman as P

ROUNDS = 3
SIZE_GOAL_MB = 250
START_GOAL_S = 3.0


def why_not() -> str | None:
    if subprocess.run(["sh", "-c", "command -v podman"], capture_output=True).returncode:
        return "no podman (`make image-tools` installs it)"
    if P.podman("image", "exists", P.image(), check=False).returncode:
        return f"no image {P.image()} (`make image` builds it)"
    return None


def main() -> int:
    reason = why_not()
    if reason:
        print(f"image: skipped: {reason}")
        return 1 if P.in_ci() else 0
    image = P.image()
    size = int(P.podman("image", "inspect", "--format", "{{.Size}}", image).stdout) / 1e6
    verdict = "meets" if size <= SIZE_GOAL_MB else "MISSES"
    print(f"image {image}: {size:.0f} MB — {verdict} the ≤ {SIZE_GOAL_MB} MB goal")
    layout = P.ROOT / "build" / "image" / "oci"
    if (layout / "index.json").exists():  # what a registry stores: the compressed layers
        (m,) = json.loads((layout / "index.json").read_text())["manifests"]
        manifest = json.loads((layout / "blobs" / Path(*m["digest"].split(":"))).read_text())
        pushed = sum(layer["size"] for layer in manifest["layers"]) / 1e6
        print(f"    compressed (the OCI layout make image wrote, as pushed): {pushed:.0f} MB")
    specs = P.container_specs(P.render(P.K8S / "overlays" / "dev"))
    times: dict[str, list[float]] = {s: [] for s in SERVICE_ORDER}
    for _ in range(ROUNDS):
        with tempfile.TemporaryDirectory(prefix="bench-image-") as d:
            stack = P.ImageStack(
                image, specs, Path(d), secrets={("mahjong-internal-token", "token"): "t" * 32}
            )
            try:
                stack.start_all()
                for s in SERVICE_ORDER:
                    times[s].append(stack.running[s].serving_after)
            finally:
                stack.close()
    print(f"podman run → SERVING (health port), {ROUNDS} stacks, dev overlay (SQLite volumes)")
    print(f"    {'service':<14}{'median s':>10}{'max s':>8}")
    worst = 0.0
    for s in SERVICE_ORDER:
        worst = max(worst, max(times[s]))
        print(f"    {s:<14}{statistics.median(times[s]):>10.2f}{max(times[s]):>8.2f}")
    verdict = "meets" if worst <= START_GOAL_S else "MISSES"
    print(f"    slowest start {worst:.2f} s — {verdict} the ≤ {START_GOAL_S:g} s goal")
    return 0
