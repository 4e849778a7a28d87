"""Fuzzing the rules service over a real loopback server with arbitrary requests: every answer
is OK, INVALID_ARGUMENT or FAILED_PRECONDITION, never INTERNAL or UNKNOWN."""

from __future__ import annotations

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mahjong.common.v1 import common_pb2
from mahjong.rules.v1 import rules_pb2, rules_pb2_grpc

from services.rules.server import SPEC
from tests.support.grpc_server import serving

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
T = 10  # seconds, every call's deadline

# Mostly valid values, with some out of range, so requests get past the first checks.
tiles = st.integers(0, 44)
hand_tiles = st.integers(1, 34)
seats = st.integers(0, 5)
rulesets = st.sampled_from(
    [
        common_pb2.RulesetRef(),
        common_pb2.RulesetRef(name="shanghai-classic"),
        common_pb2.RulesetRef(options={"ready.require_declare_ready": "false"}),
        common_pb2.RulesetRef(name="nope"),
    ]
)


@st.composite
def melds(draw):
    kind = draw(st.integers(0, 6))
    first = draw(hand_tiles)
    shape = draw(st.sampled_from(["same3", "same4", "run", "any"]))
    if shape == "same3":
        ts = [first] * 3
    elif shape == "same4":
        ts = [first] * 4
    elif shape == "run":
        ts = [first, first + 1, first + 2]
    else:
        ts = draw(st.lists(tiles, min_size=0, max_size=5))
    return common_pb2.Meld(kind=kind, tiles=ts, from_seat=draw(seats))


@st.composite
def seat_states(draw):
    n_melds = draw(st.integers(0, 2))
    size = draw(st.sampled_from([13, 14, 13 - 3 * n_melds, 14 - 3 * n_melds, 0, 20]))
    return rules_pb2.SeatState(
        concealed=draw(st.lists(hand_tiles | tiles, min_size=max(0, size), max_size=max(0, size))),
        melds=draw(st.lists(melds(), min_size=n_melds, max_size=n_melds)),
        flowers=draw(st.lists(st.integers(30, 44), max_size=3)),
        discards=draw(st.lists(tiles, max_size=3)),
        declared_ready=draw(st.booleans()),
        missed_wins=draw(st.lists(tiles, max_size=2)),
    )


@st.composite
def tables(draw):
    return rules_pb2.TableSnapshot(
        ruleset=draw(rulesets),
        seats=draw(st.lists(seat_states(), min_size=3, max_size=5)),
        dealer=draw(seats),
        turn=draw(seats),
        wall_remaining=draw(st.integers(-1, 60)),
        last_action=rules_pb2.LastAction(
            kind=draw(st.integers(0, 8)), seat=draw(seats), tile=draw(tiles)
        ),
        first_go_around=draw(st.booleans()),
        claim_counts=draw(
            st.lists(
                st.builds(
                    rules_pb2.ClaimCount,
                    claimer=seats,
                    from_seat=seats,
                    count=st.integers(-1, 5),
                ),
                max_size=2,
            )
        ),
    )


actions = st.one_of(
    st.builds(lambda t: rules_pb2.Action(discard=rules_pb2.DiscardAction(tile=t)), tiles),
    st.builds(
        lambda t: rules_pb2.Action(declare_ready=rules_pb2.DeclareReadyAction(discard=t)), tiles
    ),
    st.builds(lambda t: rules_pb2.Action(chow=rules_pb2.ChowAction(low=t)), tiles),
    st.just(rules_pb2.Action(pong=rules_pb2.PongAction())),
    st.just(rules_pb2.Action(exposed_kong=rules_pb2.ExposedKongAction())),
    st.builds(lambda t: rules_pb2.Action(added_kong=rules_pb2.AddedKongAction(tile=t)), tiles),
    st.builds(
        lambda t: rules_pb2.Action(concealed_kong=rules_pb2.ConcealedKongAction(tile=t)), tiles
    ),
    st.builds(lambda f: rules_pb2.Action(win=rules_pb2.WinAction(eight_flowers=f)), st.booleans()),
    st.just(rules_pb2.Action(pass_claim=rules_pb2.PassAction())),
    st.just(rules_pb2.Action()),
)


EXPECTED = {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION}


@pytest.fixture(scope="module")
def stub():
    with serving(SPEC) as (_server, channel):
        yield rules_pb2_grpc.RulesServiceStub(channel)


def answers(call):
    try:
        call()
    except grpc.RpcError as err:
        assert err.code() in EXPECTED, err.details()


@FUZZ
@given(tables(), seats, actions, st.lists(st.tuples(seats, actions), max_size=3))
def test_table_rpcs_never_fail_unexpectedly(stub, table, seat, action, claims):
    answers(
        lambda: stub.GetOwnTurnOptions(
            rules_pb2.GetOwnTurnOptionsRequest(table=table, seat=seat), timeout=T
        )
    )
    answers(lambda: stub.GetClaimOptions(rules_pb2.GetClaimOptionsRequest(table=table), timeout=T))
    answers(
        lambda: stub.ValidateAction(
            rules_pb2.ValidateActionRequest(table=table, seat=seat, action=action), timeout=T
        )
    )
    claim_pbs = [rules_pb2.SeatClaim(seat=s, action=a) for s, a in claims]
    answers(
        lambda: stub.ResolveClaims(
            rules_pb2.ResolveClaimsRequest(table=table, claims=claim_pbs), timeout=T
        )
    )


@FUZZ
@given(
    rulesets,
    st.lists(hand_tiles | tiles, min_size=0, max_size=16),
    st.lists(melds(), max_size=4),
    st.lists(st.integers(30, 44), max_size=9),
)
def test_hand_rpcs_never_fail_unexpectedly(stub, ruleset, concealed, meld_pbs, flowers):
    hand = rules_pb2.Hand(concealed=concealed, melds=meld_pbs, flowers=flowers)
    evaluate = rules_pb2.EvaluateHandRequest(ruleset=ruleset, hand=hand)
    answers(lambda: stub.EvaluateHand(evaluate, timeout=T))
    answers(lambda: stub.GetWaits(rules_pb2.GetWaitsRequest(ruleset=ruleset, hand=hand), timeout=T))


def test_fuzzing_reaches_real_answers(stub):
    # A sanity check of the generators' reach: a plain valid request is answered.
    hand = rules_pb2.Hand(concealed=[1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9])
    got = stub.GetWaits(rules_pb2.GetWaitsRequest(hand=hand), timeout=T)
    assert list(got.waits) == list(range(1, 10))
    bad = rules_pb2.GetWaitsRequest(hand=rules_pb2.Hand(concealed=[1] * 13))
    with pytest.raises(grpc.RpcError) as err:
        stub.GetWaits(bad, timeout=T)
    assert err.value.code() is grpc.StatusCode.INVALID_ARGUMENT
