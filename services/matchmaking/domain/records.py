"""Matchmaking records in the store: compact UTF-8 JSON, and creating a record once."""

from __future__ import annotations

import json
from typing import Any

from services.matchmaking.domain.ports import Records


def dump(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True).encode()


def load(raw: bytes | None) -> Any:
    return None if raw is None else json.loads(raw)


def create_once(store: Records, namespace: str, key: str, value: bytes) -> tuple[bytes, bool]:
    """Write ``value`` unless ``key`` is taken, in one atomic update (whoever races, one value
    stays): the record's value after the call, and whether this call wrote it."""

    def fn(raw: bytes | None) -> tuple[bytes | None, tuple[bytes, bool]]:
        return (value, (value, True)) if raw is None else (None, (raw, False))

    return store.update(namespace, key, fn)
