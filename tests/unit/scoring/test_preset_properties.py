"""Property tests (hypothesis) of the 户/番 and 倍 models: random standard hands (any sets,
some laid down), random flowers, win kinds, situations and options; payments always sum to
zero, every winner is paid, and no value is above its limit.

shanghai-old: one to three winners on a discard (the shared winning tile as their pair), a
self-draw or 抢杠; options 出冲 / 包冲 / discarder-only, the limit (0 included), rounding and
the self-draw shares. shanghai-baida: a self-draw with 0-4 百搭 replacing random concealed
tiles, random bonus tiles, 海底, 杠上花, the cap (0 included).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared import tiles as T
from tests.unit.scoring.test_properties import settled

COMMON = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)


@st.composite
def standard_hand(draw, seat: int, pair: int | None, kinds: range):
    """(concealed kinds incl. the pair, melds as vector dicts) of four sets and a pair."""
    pair = draw(st.sampled_from(kinds)) if pair is None else pair
    concealed = [pair, pair]
    melds = []
    others = [s for s in range(4) if s != seat]
    for _ in range(4):
        if draw(st.booleans()):
            suit = 9 * draw(st.integers(0, 2))
            first = suit + draw(st.integers(0, 6))
            tiles = [first, first + 1, first + 2]
            kind = "chow"
        else:
            k = draw(st.sampled_from(kinds))
            tiles, kind = [k] * 3, "pong"
        if draw(st.booleans()):
            if kind == "pong":
                kind = draw(
                    st.sampled_from(["pong", "exposed_kong", "added_kong", "concealed_kong"])
                )
                tiles = [tiles[0]] * (3 if kind == "pong" else 4)
            m = {"kind": kind, "tiles": T.format_tiles(tiles)}
            if kind != "concealed_kong":
                m["from"] = (seat - 1) % 4 if kind == "chow" else draw(st.sampled_from(others))
            melds.append(m)
        else:
            concealed.extend(tiles)
    return concealed, melds


@st.composite
def old_situation(draw):
    win = draw(st.sampled_from(["self_draw", "discard", "discard", "rob_kong"]))
    n = draw(st.integers(1, 3)) if win == "discard" else 1
    seats = draw(st.permutations([0, 1, 2, 3]))
    feeder = seats[n] if win != "self_draw" else None
    shared = draw(st.integers(0, 33)) if n > 1 else None
    flowers = list(range(34, 42))
    winners = []
    for seat in sorted(seats[:n]):
        concealed, melds = draw(standard_hand(seat, shared, range(34)))
        win_tile = shared if shared is not None else draw(st.sampled_from(concealed))
        concealed.remove(win_tile)
        mine = draw(st.permutations(flowers))[: draw(st.integers(0, 3))]
        flowers = [f for f in flowers if f not in mine]
        winners.append(
            {
                "seat": seat,
                "concealed": T.format_tiles(concealed),
                "melds": melds,
                "flowers": T.format_tiles(mine),
                "win_tile": T.format_tile(win_tile),
            }
        )
    options = {
        "old_payment.discard_payment": draw(
            st.sampled_from(["chuchong", "baochong", "discarder_only"])
        ),
        "old_scoring.limit_hu": draw(st.sampled_from([0, 100, 500])),
        "old_scoring.hu_round_up_to": draw(st.sampled_from([1, 10])),
        "old_payment.self_draw_shares": draw(st.integers(1, 2)),
        "old_payment.baoshu_exempt_fan": 0,  # the discarder's hand is not generated
    }
    obj = {
        "ruleset": "shanghai-old",
        "stake": draw(st.integers(1, 20)),
        "dealer": draw(st.integers(0, 3)),
        "winners": winners,
        "win": win,
        "replacement": win == "self_draw" and draw(st.booleans()),
        "last_tile": win == "self_draw" and draw(st.booleans()),
        "options": options,
    }
    if feeder is not None:
        obj["from"] = feeder
    return obj


@st.composite
def baida_situation(draw):
    seat = draw(st.integers(0, 3))
    playing = range(31)  # suited and winds: the dragons are bonus tiles
    concealed, melds = draw(standard_hand(seat, None, playing))
    jokers = draw(st.integers(0, min(4, len(concealed))))
    order = draw(st.permutations(range(len(concealed))))
    for i in order[:jokers]:
        concealed[i] = T.WILDCARD
    win_tile = draw(st.sampled_from(concealed))
    concealed.remove(win_tile)
    bonus = draw(st.lists(st.sampled_from([*range(34, 46), 31, 32, 33]), max_size=6))
    return {
        "ruleset": "shanghai-baida",
        "stake": draw(st.integers(1, 20)),
        "dealer": draw(st.integers(0, 3)),
        "winners": [
            {
                "seat": seat,
                "concealed": T.format_tiles(concealed),
                "melds": melds,
                "flowers": T.format_tiles(bonus),
                "win_tile": T.format_tile(win_tile),
            }
        ],
        "win": "self_draw",
        "replacement": draw(st.booleans()),
        "last_tile": draw(st.booleans()),
        "options": {"baida_scoring.hand_cap_points": draw(st.sampled_from([0, 20, 50]))},
    }


def check_conservation(s):
    assert sum(s.payments) + s.house == 0
    assert s.house == 0
    assert sum(t.chips for t in s.transfers) == sum(p for p in s.payments if p > 0)
    for r in s.winners:
        assert s.payments[r.seat] > 0


@COMMON
@given(old_situation())
def test_old_payments_sum_to_zero_and_values_stay_under_the_limit(obj):
    s = settled(obj)
    check_conservation(s)
    limit = obj["options"]["old_scoring.limit_hu"]
    for r in s.winners:
        assert r.old.hu_rounded >= r.old.hu >= 20
        assert r.value == min(r.old.hu_rounded << r.old.fan, limit or r.old.hu_rounded << r.old.fan)
        assert not limit or r.value <= limit


@COMMON
@given(baida_situation())
def test_baida_payments_sum_to_zero_and_values_stay_under_the_cap(obj):
    s = settled(obj)
    check_conservation(s)
    cap = obj["options"]["baida_scoring.hand_cap_points"]
    (r,) = s.winners
    assert r.value == min((2 + r.flowers) * r.baida.multiplier, cap or 10**18)
    assert not cap or r.value <= cap
    assert list(s.payments).count(-r.value * obj["stake"]) == 3
