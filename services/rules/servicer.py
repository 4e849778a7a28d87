"""RulesService over gRPC: protobuf ↔ domain translation only. The rules live in
:mod:`services.rules.domain`; conversion and input checks in :mod:`services.rules.convert`."""

from __future__ import annotations

from mahjong.rules.v1 import rules_pb2, rules_pb2_grpc

from infra.convert import common as C
from services.rules import convert as R
from services.rules import domain


def _ruleset(request):
    return C.ruleset_from_ref(request.ruleset if request.HasField("ruleset") else None)


class RulesServicer(rules_pb2_grpc.RulesServiceServicer):
    def EvaluateHand(self, request, context):
        ruleset = _ruleset(request)
        counts, jokers, melds, flowers = R.ruleset_hand_from_proto(request.hand, ruleset)
        wild = C.tile_from_proto_optional(request.wild_kind, "wild_kind")
        visible = C.tiles_from_proto(request.visible, "visible")
        result = domain.evaluate_hand(counts, melds, ruleset, flowers, jokers, wild, visible)
        return R.evaluation_to_proto(result.hand, result.eight_flowers, result.decompositions)

    def GetWaits(self, request, context):
        ruleset = _ruleset(request)
        counts, jokers, melds, _ = R.ruleset_hand_from_proto(request.hand, ruleset)
        wild = C.tile_from_proto_optional(request.wild_kind, "wild_kind")
        visible = C.tiles_from_proto(request.visible, "visible")
        waits = domain.hand_waits(counts, melds, ruleset, jokers, wild, visible)
        return rules_pb2.GetWaitsResponse(waits=C.tiles_to_proto(waits))

    def GetOwnTurnOptions(self, request, context):
        snap = R.snapshot_from_proto(request.table)
        seat = C.seat_from_proto(request.seat, "seat")
        options = domain.own_turn_options(snap, seat)
        return rules_pb2.GetOwnTurnOptionsResponse(options=R.own_turn_options_to_proto(options))

    def GetClaimOptions(self, request, context):
        snap = R.snapshot_from_proto(request.table)
        return rules_pb2.GetClaimOptionsResponse(
            options=[R.claim_options_to_proto(o) for o in domain.claim_options(snap)]
        )

    def ValidateAction(self, request, context):
        snap = R.snapshot_from_proto(request.table)
        seat = C.seat_from_proto(request.seat, "seat")
        domain.validate_action(snap, seat, R.action_from_proto(request.action))
        return rules_pb2.ValidateActionResponse()

    def ResolveClaims(self, request, context):
        snap = R.snapshot_from_proto(request.table)
        claims = R.claims_from_proto(request.claims)
        return R.resolution_to_proto(domain.resolve_claims(snap, claims))
