"""The ScoringService on a loopback server, shared by the servicer tests of this folder."""

from __future__ import annotations

import pytest
from mahjong.scoring.v1 import scoring_pb2_grpc

from services.scoring.server import SPEC
from tests.support.grpc_server import serving


@pytest.fixture(scope="module")
def stub():
    with serving(SPEC) as (_server, channel):
        yield scoring_pb2_grpc.ScoringServiceStub(channel)
