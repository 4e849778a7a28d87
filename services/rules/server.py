"""The rules service process: ``mahjong serve rules`` (flags: ``mahjong serve rules --help``).

Stateless: every call carries the hand or table snapshot it judges, so any replica answers any
call and the service scales horizontally behind a headless Service.
"""

from __future__ import annotations

import grpc
from mahjong.rules.v1 import rules_pb2, rules_pb2_grpc

from infra.addresses import DEFAULT_PORTS
from infra.config import Config, ServiceSpec
from infra.tls import OPERATOR
from services.rules.servicer import RulesServicer

SERVICE_NAME = rules_pb2.DESCRIPTOR.services_by_name["RulesService"].full_name


def add_to_server(server: grpc.Server, config: Config) -> None:
    rules_pb2_grpc.add_RulesServiceServicer_to_server(RulesServicer(), server)


SPEC = ServiceSpec(
    name="rules",
    default_port=DEFAULT_PORTS["rules"][0],
    default_metrics_port=DEFAULT_PORTS["rules"][1],
    add_to_server=add_to_server,
    service_names=[SERVICE_NAME],
    # Only the gateway runs hands; an operator may call it too (mahjong rules …).
    callers={"*": frozenset({"gateway", OPERATOR})},
)
