"""The image installs exactly the packages of deploy/requirements.lock (``--no-deps``): every
dependency pyproject.toml pins must be there at its pinned version, and the build stage's lock
must pin what pyproject.toml's build system and the stubs need."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCKS = ROOT / "deploy"


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep and version, f"{path.name}: not pinned: {line}"
            out[_norm(name)] = version
    return out


def required(specs: list[str]) -> dict[str, str]:
    out = {}
    for spec in specs:
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)(\[[^\]]*\])?(==([\w.]+))?.*", spec)
        assert m, spec
        out[_norm(m.group(1))] = m.group(4) or ""
    return out


def test_runtime_lock_pins_every_dependency_of_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lock = pins(LOCKS / "requirements.lock")
    for name, version in required(project["dependencies"]).items():
        assert name in lock, f"deploy/requirements.lock lacks {name} (regenerate it)"
        assert not version or lock[name] == version, (name, version, lock[name])
    assert "psycopg-binary" in lock  # the [binary] extra: no libpq to install in the image


def test_build_lock_pins_the_build_system_and_protoc():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    lock = pins(LOCKS / "build-requirements.lock")
    dev = required(config["project"]["optional-dependencies"]["dev"])
    for name, version in required(config["build-system"]["requires"]).items():
        assert name in lock, name
        assert not version or lock[name] == version, (name, version)
    assert lock["grpcio-tools"] == dev["grpcio-tools"]
    runtime = pins(LOCKS / "requirements.lock")
    for name in lock.keys() & runtime.keys():  # both stages agree where they overlap
        assert lock[name] == runtime[name], name
