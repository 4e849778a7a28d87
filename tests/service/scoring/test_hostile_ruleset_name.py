"""Scoring over a real loopback server: a hostile ruleset name is INVALID_ARGUMENT, never
INTERNAL (the name reached the file system as a path)."""

from __future__ import annotations

import grpc
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.scoring.v1 import scoring_pb2 as pb
from mahjong.scoring.v1 import scoring_pb2_grpc as pb_grpc

from services.scoring.server import SPEC
from tests.support.grpc_server import serving


@pytest.mark.parametrize("name", ["a" * 5000, "../../pyproject", "a\x00b"])
def test_hostile_ruleset_name_is_invalid_argument(name):
    with serving(SPEC) as (_server, channel):
        stub = pb_grpc.ScoringServiceStub(channel)
        ctx = pb.HandContext(ruleset=common_pb2.RulesetRef(name=name), dealer=1, stake=1)
        with pytest.raises(grpc.RpcError) as err:
            stub.SettleDraw(pb.SettleDrawRequest(context=ctx), timeout=10)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, err.value.details()
        assert "ruleset" in err.value.details()
