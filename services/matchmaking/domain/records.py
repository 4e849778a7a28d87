"""How matchmaking's records are encoded: compact UTF-8 JSON (the repositories in
:mod:`services.matchmaking.storage` write them)."""

from __future__ import annotations

import json
from typing import Any


def dump(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True).encode()


def load(raw: bytes | None) -> Any:
    return None if raw is None else json.loads(raw)
