"""WallService over a real loopback gRPC server: a whole hand (deal, 补花, draws to the end,
reveal, verification), every error code, health, reflection, metrics and concurrent draws."""

from __future__ import annotations

import contextlib
import threading

import grpc
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.wall.v1 import wall_pb2, wall_pb2_grpc

from infra.convert import common as C
from infra.ports import AUTO_PORT
from services.wall.cli import record_from_reveal
from services.wall.domain.verify import verify_record
from services.wall.server import SERVICE_NAME, SPEC
from shared import tiles as T
from tests.support.grpc_server import serving
from tests.support.probes import (
    fetch_metrics,
    file_containing_symbol,
    health_status,
    list_services,
    metric_value,
    rpc_error,
)

TIMEOUT = 10


@pytest.fixture(scope="module", params=["memory", "sqlite", "postgres"])
def wall(request, tmp_path_factory):
    with contextlib.ExitStack() as stack:
        url = "memory://"
        if request.param == "sqlite":
            url = f"sqlite:///{tmp_path_factory.mktemp('wall')}/wall.db"
        elif request.param == "postgres":
            url = stack.enter_context(request.getfixturevalue("postgres_database").schema())
        server, channel = stack.enter_context(
            serving(
                SPEC,
                store_url=url,
                metrics_port=AUTO_PORT,
                reflection=True,  # for test_health_and_reflection (off unless asked for)
                extra={"allow_fixed_seed": True},
            )
        )
        yield server, channel, wall_pb2_grpc.WallServiceStub(channel)


def new_hand(stub, dealer=0, **kw):
    return stub.NewHand(
        wall_pb2.NewHandRequest(dealer=C.seat_to_proto(dealer), **kw), timeout=TIMEOUT
    )


def test_health_and_reflection(wall):
    _, channel, _ = wall
    assert health_status(channel) == "SERVING"
    assert health_status(channel, SERVICE_NAME) == "SERVING"
    assert SERVICE_NAME == "mahjong.wall.v1.WallService"
    assert SERVICE_NAME in list_services(channel)
    assert file_containing_symbol(channel, SERVICE_NAME)  # descriptors for grpcurl


def test_reflection_is_off_unless_asked_for():
    with serving(SPEC) as (_, channel):
        assert health_status(channel, SERVICE_NAME) == "SERVING"
        code, _, _ = rpc_error(lambda: list_services(channel))
    assert code == grpc.StatusCode.UNIMPLEMENTED


def test_a_whole_hand_with_flower_replacement_then_reveal_and_verify(wall):
    _, _, stub = wall
    hand = new_hand(stub, dealer=2)
    assert len(hand.commitment) == 32 and 1 <= hand.dice.first <= 6
    assert hand.counts.remaining == 144
    assert (
        C.seat_from_proto(hand.layout.opened_seat)
        == (2 + hand.dice.first + hand.dice.second - 1) % 4
    )
    deal = stub.Deal(wall_pb2.DealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
    assert [len(h.tiles) for h in deal.hands] == [13, 13, 14, 13]
    assert deal.counts.remaining == 91 and deal.counts.live_drawn == 53
    received = [C.tiles_from_proto(h.tiles) for h in deal.hands]
    for h in deal.hands:
        assert list(h.flowers) == [t for t in h.tiles if T.is_flower(t - 1)]

    # 补花 as the gateway does it: dealer first, in turn order, until no hand holds a flower
    concealed = [[k for k in tiles if not T.is_flower(k)] for tiles in received]
    pending = [sum(T.is_flower(k) for k in tiles) for tiles in received]
    while any(pending):
        for i in range(4):
            seat = (2 + i) % 4
            while pending[seat]:
                r = stub.DrawReplacement(
                    wall_pb2.DrawReplacementRequest(
                        hand_id=hand.hand_id, seat=C.seat_to_proto(seat)
                    ),
                    timeout=TIMEOUT,
                )
                pending[seat] -= 1
                tile = C.tile_from_proto(r.tile)
                received[seat].append(tile)
                if T.is_flower(tile):
                    pending[seat] += 1
                else:
                    concealed[seat].append(tile)
    assert [len(c) for c in concealed] == [13, 13, 14, 13]

    # draw the wall out
    seat = 2
    while True:
        try:
            r = stub.Draw(
                wall_pb2.DrawRequest(hand_id=hand.hand_id, seat=C.seat_to_proto(seat)),
                timeout=TIMEOUT,
            )
        except grpc.RpcError as exc:
            assert exc.code() is grpc.StatusCode.FAILED_PRECONDITION
            break
        received[seat].append(C.tile_from_proto(r.tile))
        seat = (seat + 1) % 4
    assert sorted(k for tiles in received for k in tiles) == T.canonical_set()
    code, _, info = rpc_error(
        lambda: stub.DrawReplacement(
            wall_pb2.DrawReplacementRequest(hand_id=hand.hand_id, seat=common_pb2.SEAT_0),
            timeout=TIMEOUT,
        )
    )
    assert code is grpc.StatusCode.FAILED_PRECONDITION and info.reason == "WALL_EXHAUSTED"
    remaining = stub.Remaining(wall_pb2.RemainingRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
    assert remaining.counts.remaining == 0 and not remaining.revealed

    revealed = stub.Reveal(wall_pb2.RevealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
    assert revealed.commitment == hand.commitment and len(revealed.seed) == 32
    assert revealed.dice == hand.dice and revealed.dealer == common_pb2.SEAT_2
    assert stub.Reveal(wall_pb2.RevealRequest(hand_id=hand.hand_id), timeout=TIMEOUT) == revealed
    record = record_from_reveal(hand.hand_id, revealed)
    assert verify_record(record).ok
    assert len(record["events"]) == 4 + 91
    assert stub.Remaining(wall_pb2.RemainingRequest(hand_id=hand.hand_id), timeout=TIMEOUT).revealed


def test_fixed_seed_replays_the_same_hand(wall):
    _, _, stub = wall
    a = new_hand(stub, 1, seed=bytes(32))
    b = new_hand(stub, 1, seed=bytes(32))
    assert a.hand_id != b.hand_id
    assert (a.dice, a.commitment, a.layout) == (b.dice, b.commitment, b.layout)
    deal = [stub.Deal(wall_pb2.DealRequest(hand_id=h.hand_id), timeout=TIMEOUT) for h in (a, b)]
    assert deal[0].hands == deal[1].hands


def test_new_hand_request_id_is_idempotent(wall):
    _, _, stub = wall
    a = new_hand(stub, 0, request_id="t1/h1")
    assert new_hand(stub, 0, request_id="t1/h1") == a


def test_a_repeated_call_is_answered_as_the_first_time_counts_included(wall):
    """A numbered call retried after later ones (a gateway taking a table over redoes the
    calls its log does not show yet) gets its first answer again: the same tile and the same
    counts, not the wall's counts as they are now (the gateway sets its tiles left from them).
    Deal and NewHand likewise."""
    _, _, stub = wall
    hand = new_hand(stub, 0, request_id="t-repeat/h1")
    deal = stub.Deal(wall_pb2.DealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)

    def call(method, rid, **kw):
        request_type = {
            "Draw": wall_pb2.DrawRequest,
            "DrawReplacement": wall_pb2.DrawReplacementRequest,
        }[method]
        req = request_type(hand_id=hand.hand_id, seat=common_pb2.SEAT_1, request_id=rid)
        return getattr(stub, method)(req, timeout=TIMEOUT)

    first = [call("DrawReplacement", "r1"), call("Draw", "r2"), call("DrawReplacement", "r3")]
    assert [f.counts.remaining for f in first] == [
        deal.counts.remaining - 1,
        deal.counts.remaining - 2,
        deal.counts.remaining - 3,
    ]
    again = [call("DrawReplacement", "r1"), call("Draw", "r2"), call("DrawReplacement", "r3")]
    assert again == first
    assert stub.Deal(wall_pb2.DealRequest(hand_id=hand.hand_id), timeout=TIMEOUT) == deal
    assert new_hand(stub, 0, request_id="t-repeat/h1") == hand


def test_draw_request_id_is_idempotent(wall):
    _, _, stub = wall
    hand = new_hand(stub)
    stub.Deal(wall_pb2.DealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
    req = wall_pb2.DrawRequest(hand_id=hand.hand_id, seat=common_pb2.SEAT_0, request_id="d1")
    first = stub.Draw(req, timeout=TIMEOUT)
    assert stub.Draw(req, timeout=TIMEOUT).tile == first.tile
    assert (
        stub.Remaining(
            wall_pb2.RemainingRequest(hand_id=hand.hand_id), timeout=TIMEOUT
        ).counts.live_drawn
        == 54
    )


def test_tile_swap_when_the_ruleset_allows_it(wall):
    _, _, stub = wall
    ruleset = C.ruleset_to_ref("", {"table.tile_swap": True})
    hand = new_hand(stub, 3, ruleset=ruleset)
    deal = stub.Deal(wall_pb2.DealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
    buried = [t for t in deal.hands[0].tiles if not T.is_flower(t - 1)][:5]
    swap = stub.SwapTiles(
        wall_pb2.SwapTilesRequest(hand_id=hand.hand_id, seat=common_pb2.SEAT_0, buried=buried),
        timeout=TIMEOUT,
    )
    assert len(swap.taken) == 5 and swap.counts.remaining == 91
    code, _details, info = rpc_error(
        lambda: stub.SwapTiles(
            wall_pb2.SwapTilesRequest(hand_id=hand.hand_id, seat=common_pb2.SEAT_0, buried=buried),
            timeout=TIMEOUT,
        )
    )
    assert code is grpc.StatusCode.FAILED_PRECONDITION and info.reason == "ALREADY_SWAPPED"
    revealed = stub.Reveal(wall_pb2.RevealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
    assert revealed.tile_swap_count == 5
    assert verify_record(record_from_reveal(hand.hand_id, revealed)).ok


def _calls(stub, hand_id):
    h = hand_id
    return {
        "unknown hand": (
            lambda: stub.Deal(wall_pb2.DealRequest(hand_id="h_unknown"), timeout=TIMEOUT),
            grpc.StatusCode.NOT_FOUND,
            "no hand 'h_unknown'",
        ),
        "empty hand id": (
            lambda: stub.Remaining(wall_pb2.RemainingRequest(), timeout=TIMEOUT),
            grpc.StatusCode.INVALID_ARGUMENT,
            "hand_id is empty",
        ),
        "unset seat": (
            lambda: stub.Draw(wall_pb2.DrawRequest(hand_id=h), timeout=TIMEOUT),
            grpc.StatusCode.INVALID_ARGUMENT,
            "seat is not set",
        ),
        "bad seat value": (
            lambda: stub.Draw(wall_pb2.DrawRequest(hand_id=h, seat=9), timeout=TIMEOUT),
            grpc.StatusCode.INVALID_ARGUMENT,
            "seat value 9 out of range",
        ),
        "unset dealer": (
            lambda: stub.NewHand(wall_pb2.NewHandRequest(), timeout=TIMEOUT),
            grpc.StatusCode.INVALID_ARGUMENT,
            "dealer is not set",
        ),
        "unknown ruleset": (
            lambda: stub.NewHand(
                wall_pb2.NewHandRequest(dealer=1, ruleset=common_pb2.RulesetRef(name="laxihu")),
                timeout=TIMEOUT,
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "ruleset 'laxihu'",
        ),
        "short seed": (
            lambda: stub.NewHand(wall_pb2.NewHandRequest(dealer=1, seed=b"x"), timeout=TIMEOUT),
            grpc.StatusCode.INVALID_ARGUMENT,
            "seed has 1 bytes",
        ),
        "bad buried tile": (
            lambda: stub.SwapTiles(
                wall_pb2.SwapTilesRequest(hand_id=h, seat=1, buried=[1, 2, 0]), timeout=TIMEOUT
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            r"buried[2] is not set",
        ),
        "draw before deal": (
            lambda: stub.Draw(wall_pb2.DrawRequest(hand_id=h, seat=1), timeout=TIMEOUT),
            grpc.StatusCode.FAILED_PRECONDITION,
            "not dealt yet",
        ),
        "swap before deal": (
            lambda: stub.SwapTiles(
                wall_pb2.SwapTilesRequest(hand_id=h, seat=1, buried=[1] * 5), timeout=TIMEOUT
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
            "not dealt yet",
        ),
    }


@pytest.mark.parametrize(
    "case",
    [
        "unknown hand",
        "empty hand id",
        "unset seat",
        "bad seat value",
        "unset dealer",
        "unknown ruleset",
        "short seed",
        "bad buried tile",
        "draw before deal",
        "swap before deal",
    ],
)
def test_errors(wall, case):
    _, _, stub = wall
    hand = new_hand(stub)
    fn, code, words = _calls(stub, hand.hand_id)[case]
    got, details, info = rpc_error(fn)
    assert got is code, details
    assert words in details
    assert info.domain == "mahjong" and info.reason


def test_revealed_hand_refuses_draws(wall):
    _, _, stub = wall
    hand = new_hand(stub)
    stub.Deal(wall_pb2.DealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
    stub.Reveal(wall_pb2.RevealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
    code, _details, info = rpc_error(
        lambda: stub.Draw(
            wall_pb2.DrawRequest(hand_id=hand.hand_id, seat=common_pb2.SEAT_1), timeout=TIMEOUT
        )
    )
    assert code is grpc.StatusCode.FAILED_PRECONDITION and info.reason == "HAND_REVEALED"


def test_fixed_seed_needs_the_server_flag():
    with serving(SPEC) as (_, channel):
        stub = wall_pb2_grpc.WallServiceStub(channel)
        code, details, info = rpc_error(lambda: new_hand(stub, 0, seed=bytes(32)))
        assert code is grpc.StatusCode.FAILED_PRECONDITION
        assert info.reason == "FIXED_SEED_DISABLED" and "--allow-fixed-seed" in details
        assert len(new_hand(stub, 0).commitment) == 32


def test_eight_threads_drawing_from_one_hand_never_get_a_tile_twice(wall):
    _, _, stub = wall
    hand = new_hand(stub, 1)
    deal = stub.Deal(wall_pb2.DealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
    got: list[int] = [C.tile_from_proto(t) for h in deal.hands for t in h.tiles]
    sequences: list[int] = []
    lock = threading.Lock()
    errors: list[grpc.StatusCode] = []

    def worker(i: int) -> None:
        seat = C.seat_to_proto(i % 4)
        while True:
            try:
                if i % 3 == 0:
                    r = stub.DrawReplacement(
                        wall_pb2.DrawReplacementRequest(hand_id=hand.hand_id, seat=seat),
                        timeout=TIMEOUT,
                    )
                else:
                    r = stub.Draw(
                        wall_pb2.DrawRequest(hand_id=hand.hand_id, seat=seat), timeout=TIMEOUT
                    )
            except grpc.RpcError as exc:
                with lock:
                    errors.append(exc.code())
                return
            with lock:
                got.append(C.tile_from_proto(r.tile))
                sequences.append(r.sequence)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [grpc.StatusCode.FAILED_PRECONDITION] * 8
    assert len(got) == 144
    assert sorted(got) == T.canonical_set()
    assert sorted(sequences) == list(range(5, 5 + 91))


def test_metrics_count_calls_with_status_codes(wall):
    server, _, stub = wall
    before = fetch_metrics(server.metrics_port)
    hand = new_hand(stub)
    for _ in range(2):
        with pytest.raises(grpc.RpcError):
            stub.Deal(wall_pb2.DealRequest(hand_id="h_missing"), timeout=TIMEOUT)
    stub.Deal(wall_pb2.DealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
    after = fetch_metrics(server.metrics_port)

    def delta(**labels):
        name = "grpc_server_handled_total"
        labels["grpc_service"] = SERVICE_NAME
        return metric_value(after, name, **labels) - metric_value(before, name, **labels)

    assert delta(grpc_method="NewHand", grpc_code="OK") == 1
    assert delta(grpc_method="Deal", grpc_code="OK") == 1
    game = metric_value(after, "mahjong_wall_tiles_drawn_total", kind="deal") - metric_value(
        before, "mahjong_wall_tiles_drawn_total", kind="deal"
    )
    assert game == 53
    stub.Deal(wall_pb2.DealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)  # a repeat
    again = fetch_metrics(server.metrics_port)
    assert metric_value(again, "mahjong_wall_tiles_drawn_total", kind="deal") == metric_value(
        after, "mahjong_wall_tiles_drawn_total", kind="deal"
    )
    assert metric_value(after, "mahjong_wall_hands_started_total") > 0
    assert delta(grpc_method="Deal", grpc_code="NOT_FOUND") == 2
    assert "grpc_server_handling_seconds_bucket" in after


def test_retention_flag_starts_and_stops_the_sweeper():
    from infra.config import parse_config

    assert parse_config(SPEC, []).extra["retain_hours"] == 24.0
    assert parse_config(SPEC, ["--retain-hours", "0"]).extra["retain_hours"] == 0.0
    with serving(SPEC, extra={"retain_hours": 1.0}) as (server, _):
        sweeper = server.resource.sweeper
        assert sweeper.retain_seconds == 3600 and sweeper.interval == 360
        assert sweeper._thread.is_alive()
    assert not sweeper._thread.is_alive()
    with serving(SPEC) as (server, _):
        assert server.resource.sweeper is None


def _ruleset(name, **options):
    return common_pb2.RulesetRef(name=name, options=options)


def test_a_baida_hand_deals_152_tiles_lists_dragons_as_bonus_and_verifies(wall):
    _, _, stub = wall
    hand = new_hand(stub, dealer=1, ruleset=_ruleset("shanghai-baida"), seed=bytes(range(32)))
    assert hand.counts.remaining == 152
    deal = stub.Deal(wall_pb2.DealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
    for seat in deal.hands:
        tiles = C.tiles_from_proto(seat.tiles)
        bonus = [k for k in tiles if T.is_bonus(k) or T.is_dragon(k)]
        assert C.tiles_from_proto(seat.flowers) == bonus
    reveal = stub.Reveal(wall_pb2.RevealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
    assert reveal.tile_set.extras and reveal.tile_set.dedicated_wildcards
    assert reveal.tile_set.dragons_bonus and not reveal.tile_set.flipped_wildcard
    record = record_from_reveal(hand.hand_id, reveal)
    assert verify_record(record).ok


def test_the_flipped_indicator_over_grpc(wall):
    _, _, stub = wall
    ref = _ruleset("shanghai-baida", **{"baida_tiles.wildcards": "flipped"})
    hand = new_hand(stub, dealer=0, ruleset=ref)
    assert hand.counts.remaining == 148
    stub.Deal(wall_pb2.DealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
    req = wall_pb2.FlipIndicatorRequest(hand_id=hand.hand_id, request_id="flip-1")
    flip = stub.FlipIndicator(req, timeout=TIMEOUT)
    assert stub.FlipIndicator(req, timeout=TIMEOUT) == flip
    indicator = C.tile_from_proto(flip.indicator)
    wild = C.tile_from_proto(flip.wild)
    assert not T.is_bonus(indicator) and not T.is_dragon(indicator)
    assert wild != indicator and flip.counts.replacements_drawn == 1 + len(flip.set_aside)
    reveal = stub.Reveal(wall_pb2.RevealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
    assert reveal.events[-1].kind == wall_pb2.WALL_EVENT_KIND_INDICATOR
    assert verify_record(record_from_reveal(hand.hand_id, reveal)).ok


def test_flip_without_a_flipped_wildcard_is_failed_precondition(wall):
    _, _, stub = wall
    hand = new_hand(stub, dealer=0, ruleset=_ruleset("shanghai-baida"))
    stub.Deal(wall_pb2.DealRequest(hand_id=hand.hand_id), timeout=TIMEOUT)
    code, _, info = rpc_error(
        lambda: stub.FlipIndicator(
            wall_pb2.FlipIndicatorRequest(hand_id=hand.hand_id), timeout=TIMEOUT
        )
    )
    assert code == grpc.StatusCode.FAILED_PRECONDITION and info.reason == "NO_FLIPPED_WILDCARD"
