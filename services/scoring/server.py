"""The scoring service process: ``mahjong serve scoring`` (flags: ``mahjong serve scoring
--help``).

Stateless: every call carries the hand it settles, so any replica answers any call and the
service scales horizontally behind a headless Service. It calls no other service: a claimed win
is verified in-process with the shared hand evaluation (:mod:`shared.hand`).
"""

from __future__ import annotations

import grpc
from mahjong.scoring.v1 import scoring_pb2, scoring_pb2_grpc

from infra.addresses import DEFAULT_PORTS
from infra.config import Config, ServiceSpec
from infra.tls import OPERATOR
from services.scoring.servicer import ScoringServicer

SERVICE_NAME = scoring_pb2.DESCRIPTOR.services_by_name["ScoringService"].full_name


def add_to_server(server: grpc.Server, config: Config) -> None:
    scoring_pb2_grpc.add_ScoringServiceServicer_to_server(ScoringServicer(), server)


SPEC = ServiceSpec(
    name="scoring",
    default_port=DEFAULT_PORTS["scoring"][0],
    default_metrics_port=DEFAULT_PORTS["scoring"][1],
    add_to_server=add_to_server,
    service_names=[SERVICE_NAME],
    # Only the gateway runs hands; an operator may call it too (mahjong scoring …).
    callers={"*": frozenset({"gateway", OPERATOR})},
)
