"""``python -m tests.bench [AREA ...]``: run every ``tests/bench/bench_*.py`` module's
``main()`` in name order (or only the named areas), go on past a failing one, and exit non-zero
at the end if any failed."""

from __future__ import annotations

import importlib
import sys
import time
import traceback
from pathlib import Path


def modules(only: list[str]) -> list[str]:
    names = sorted(p.stem for p in Path(__file__).parent.glob("bench_*.py"))
    if only:
        unknown = [a for a in only if f"bench_{a}" not in names]
        if unknown:
            raise SystemExit(
                f"unknown benchmark area(s): {', '.join(unknown)}; "
                f"known: {', '.join(n.removeprefix('bench_') for n in names)}"
            )
        names = [n for n in names if n.removeprefix("bench_") in only]
    return names


def run(name: str) -> bool:
    print(f"\n=== {name} ===", flush=True)
    start = time.perf_counter()
    try:
        module = importlib.import_module(f"tests.bench.{name}")
        code = module.main()
    except SystemExit as exc:
        code = exc.code
    except Exception:
        traceback.print_exc()
        code = 1
    ok = code in (None, 0)
    status = "ok" if ok else f"FAILED ({code})"
    print(f"=== {name}: {status} in {time.perf_counter() - start:.1f}s ===", flush=True)
    return ok


def main(argv: list[str]) -> int:
    names = modules(argv)
    failed = [n for n in names if not run(n)]
    print(f"\n{len(names) - len(failed)}/{len(names)} benchmarks ran", flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
