"""Another commit's tree beside this checkout, so a benchmark measures a change side by side
with the commit before it in one run (the developers' guide: ratios from one run, not absolute
figures across runs).

:func:`tree_at` extracts ``shared`` and ``services`` of a commit with ``git archive`` and builds
its compiled modules in place with this venv's mypyc (as ``make install`` does here), once per
commit: kept under ``.venv-bench/trees/``. A service of that tree runs from it through
:func:`run_from` (its working directory and ``PYTHONPATH``), with this checkout's generated
protos (a later contract only adds fields, which the older code ignores)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TREES = ROOT / ".venv-bench" / "trees"
FILES = ("shared", "services", "setup.py", "pyproject.toml")


def tree_at(commit: str) -> Path | None:
    """``commit``'s tree, built; None (said why) when this clone lacks the commit (a shallow
    clone) or its build fails."""
    tree = TREES / commit
    if (tree / ".built").exists():
        return tree
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, *FILES], capture_output=True
    )
    if archive.returncode != 0:
        print(f"  side by side: this clone has no commit {commit} (a shallow clone?)")
        return None
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    print(f"  side by side: building commit {commit}'s compiled modules (once, about 2 minutes)")
    built = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
        cwd=tree,
        capture_output=True,
        text=True,
    )
    if built.returncode != 0:
        print(f"  side by side: commit {commit} did not build:\n{built.stderr[-2000:]}")
        return None
    shutil.rmtree(tree / "build", ignore_errors=True)
    (tree / ".built").touch()
    return tree


def run_from(tree: Path) -> list[str]:
    """A command prefix that runs a process from ``tree`` (its modules before this checkout's)."""
    return ["env", f"--chdir={tree}", f"PYTHONPATH={tree}"]
