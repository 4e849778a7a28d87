"""The versions of a component's tables in a store's database (both SQL backends).

A component (the store itself, the ledger …) declares its tables as a :class:`Schema`: the
script that creates them as they are now, the version that script makes, and the steps that
upgrade a database at an older version, one version each. A database keeps one row per
component in ``store_schema`` (component, version). On start the component's schema is
migrated: an empty database gets the current schema at once (no replay of old versions); one at
an older version runs the steps from its version on; one at the current version is left as it
is; one at a newer version, or at an older one with no step from there, is refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from infra.store.base import StoreError

# The version of the store's own tables (records, logs, leases) on every backend: 2 since the
# leases came (the first release had records and logs alone). A database of an earlier release
# is at it already; a new one is created at it.
STORE_VERSION = 2


@dataclass(frozen=True)
class Schema:
    """``create`` makes a component's tables at ``version`` on an empty database;
    ``upgrades[v]`` brings a database at version ``v`` to ``v + 1``."""

    version: int
    create: str
    upgrades: Mapping[int, str] = field(default_factory=dict)

    @classmethod
    def of_steps(cls, migrations: Sequence[str]) -> Schema:
        """A schema written as a list of steps from nothing (step ``i`` brings version ``i`` to
        ``i + 1``): an empty database runs them all."""
        return cls(
            version=len(migrations),
            create=";\n".join(migrations),
            upgrades={i: step for i, step in enumerate(migrations) if i > 0},
        )


def as_schema(schema: Schema | Sequence[str]) -> Schema:
    return schema if isinstance(schema, Schema) else Schema.of_steps(schema)


def scripts_to_run(component: str, schema: Schema, before: int) -> list[str]:
    """What brings ``component``'s tables from version ``before`` (0: none yet) to
    ``schema.version``; StoreError when nothing can."""
    if before > schema.version:
        raise StoreError(
            f"the store's {component} schema is at version {before}, newer than this "
            f"program knows ({schema.version}): run the newer release"
        )
    if before == 0:
        return [schema.create] if schema.version else []
    missing = [v for v in range(before, schema.version) if v not in schema.upgrades]
    if missing:
        raise StoreError(
            f"the store's {component} schema is at version {before}, which this program cannot "
            f"upgrade (no step from version {missing[0]}; it creates version {schema.version} "
            "on an empty database)"
        )
    return [schema.upgrades[v] for v in range(before, schema.version)]
