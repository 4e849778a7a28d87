"""The contracts: every proto compiles and passes ``buf lint`` (STANDARD rules)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROTOS = ROOT / "protos"


def test_buf_lint_passes():
    buf = Path(sys.executable).parent / "buf"
    result = subprocess.run(
        [str(buf), "lint"], cwd=PROTOS, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_proto_compiles_together(tmp_path):
    files = sorted(str(p.relative_to(PROTOS)) for p in PROTOS.rglob("*.proto"))
    assert "mahjong/common/v1/common.proto" in files and "mahjong/wall/v1/wall.proto" in files
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{PROTOS}",
            f"--python_out={tmp_path}",
            f"--grpc_python_out={tmp_path}",
            *files,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr


def test_every_proto_is_in_its_versioned_package():
    for path in PROTOS.rglob("*.proto"):
        rel = path.relative_to(PROTOS)
        area = rel.parts[1]
        text = path.read_text(encoding="utf-8")
        assert rel.parts[0] == "mahjong" and rel.parts[2] == "v1", rel
        assert f"package mahjong.{area}.v1;" in text, rel
