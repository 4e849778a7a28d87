"""The wall service process: ``mahjong serve wall`` (flags: ``mahjong serve wall --help``).

Own flag: ``--allow-fixed-seed`` (env ``MAHJONG_WALL_ALLOW_FIXED_SEED=1``) lets NewHand take a
fixed seed, for tests and replays only; never set it in production.
"""

from __future__ import annotations

import argparse

import grpc
from mahjong.wall.v1 import wall_pb2, wall_pb2_grpc

from services.wall.repository import WallRepository
from services.wall.servicer import WallServicer
from shared.addresses import DEFAULT_PORTS
from shared.server import Config, ServiceSpec
from shared.store import open_store

SERVICE_NAME = wall_pb2.DESCRIPTOR.services_by_name["WallService"].full_name


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-fixed-seed",
        action="store_true",
        help="accept NewHand.seed (tests and replays only; never in production)",
    )


def add_to_server(server: grpc.Server, config: Config):
    store = open_store(config.store_url)
    servicer = WallServicer(
        WallRepository(store), allow_fixed_seed=bool(config.extra.get("allow_fixed_seed"))
    )
    wall_pb2_grpc.add_WallServiceServicer_to_server(servicer, server)
    return store


SPEC = ServiceSpec(
    name="wall",
    default_port=DEFAULT_PORTS["wall"][0],
    default_metrics_port=DEFAULT_PORTS["wall"][1],
    add_to_server=add_to_server,
    service_names=[SERVICE_NAME],
    add_arguments=add_arguments,
)
