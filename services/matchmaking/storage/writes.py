"""A write the repositories share: creating a record once, whoever races."""

from __future__ import annotations

from services.matchmaking.domain.ports import Records


def create_once(store: Records, namespace: str, key: str, value: bytes) -> tuple[bytes, bool]:
    """Write ``value`` unless ``key`` is taken, in one atomic update (whoever races, one value
    stays): the record's value after the call, and whether this call wrote it."""

    def fn(raw: bytes | None) -> tuple[bytes | None, tuple[bytes, bool]]:
        return (value, (value, True)) if raw is None else (None, (raw, False))

    return store.update(namespace, key, fn)
