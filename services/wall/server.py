"""The wall service process: ``mahjong serve wall`` (flags: ``mahjong serve wall --help``).

Own flags: ``--allow-fixed-seed`` (env ``MAHJONG_WALL_ALLOW_FIXED_SEED=1``) lets NewHand take a
fixed seed, for tests and replays only, never in production; ``--retain-hours`` (default 24,
0 keeps walls forever) is how long a wall stays in the store.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from mahjong.wall.v1 import wall_pb2, wall_pb2_grpc

from infra.addresses import DEFAULT_PORTS
from infra.binding import open_config_store
from infra.config import Config, ServiceSpec
from infra.settings import PerService, from_flags, setting
from infra.tls import OPERATOR
from services.wall.servicer import WallServicer
from services.wall.storage.repository import WallRepository
from services.wall.storage.retention import Sweeper

SERVICE_NAME = wall_pb2.DESCRIPTOR.services_by_name["WallService"].full_name


@dataclass(frozen=True)
class WallSettings:
    """The wall's own flags (:mod:`infra.settings`)."""

    allow_fixed_seed: bool = setting(
        False,
        "--allow-fixed-seed",
        "accept NewHand.seed (tests and replays only; never in production)",
    )
    # A server built in a test without the flag keeps its walls; `mahjong serve wall`, 24 h.
    retain_hours: float = setting(
        0.0,
        "--retain-hours",
        "delete walls older than this many hours (0: keep them forever)",
        flag_default=PerService(lambda _spec: 24.0),
        parse=float,
    )


class WallResources:
    """What the wall holds open while serving: its store and the retention sweeper."""

    def __init__(self, store, sweeper: Sweeper | None) -> None:
        self.store = store
        self.sweeper = sweeper

    def close(self) -> None:
        if self.sweeper is not None:
            self.sweeper.close()
        self.store.close()


def add_to_server(server: grpc.Server, config: Config):
    store = open_config_store(config)
    repo = WallRepository(store)
    settings = from_flags(WallSettings, config.extra)
    servicer = WallServicer(repo, allow_fixed_seed=settings.allow_fixed_seed)
    wall_pb2_grpc.add_WallServiceServicer_to_server(servicer, server)
    hours = settings.retain_hours
    sweeper = None
    if hours > 0:
        retain = hours * 3600
        sweeper = Sweeper(repo, retain, interval=min(retain / 10, 600)).start()
    return WallResources(store, sweeper)


SPEC = ServiceSpec(
    name="wall",
    default_port=DEFAULT_PORTS["wall"][0],
    default_metrics_port=DEFAULT_PORTS["wall"][1],
    add_to_server=add_to_server,
    service_names=[SERVICE_NAME],
    # Only the gateway runs hands; an operator may call it too (mahjong wall …).
    callers={"*": frozenset({"gateway", OPERATOR})},
    settings=(WallSettings,),
)
