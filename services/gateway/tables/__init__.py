"""Live tables of one gateway replica (see :mod:`.manager`, the facade the servicer calls;
``GatewaySettings`` is :mod:`services.gateway.settings`' own, named here too)."""

from services.gateway.settings import GatewaySettings
from services.gateway.tables.creation import TableSpec, spec_fingerprint
from services.gateway.tables.leases import LEASE_PREFIX, owner_of
from services.gateway.tables.live import LiveTable
from services.gateway.tables.log import read_table_log
from services.gateway.tables.manager import TableManager
from services.gateway.tables.records import (
    CREATES,
    JOINS,
    OUTBOX,
    REPORTED,
    REQUESTS,
    check_id,
)

__all__ = [
    "CREATES",
    "JOINS",
    "LEASE_PREFIX",
    "OUTBOX",
    "REPORTED",
    "REQUESTS",
    "GatewaySettings",
    "LiveTable",
    "TableManager",
    "TableSpec",
    "check_id",
    "owner_of",
    "read_table_log",
    "spec_fingerprint",
]
