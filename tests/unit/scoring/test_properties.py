"""Property tests over random winning situations (hypothesis).

Winners hold random 碰碰胡 / flush / honor hands, some sets laid down as melds claimed from
random seats, random flowers, dice, 荒番, readiness, extra claims (承包), rulesets and stakes,
and win by self-draw, 杠开, discard (one to three winners on the same tile) or 抢杠.
"""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from services.scoring.domain import settle_win
from services.scoring.domain.loss_cap import loss_cap_chips
from services.scoring.domain.rules import scoring_rules
from services.scoring.vector_format import win_input
from shared import tiles as T
from shared.errors import InvalidArgument

RULESETS = ["shanghai-qiaoma", "shanghai-classic"]


@st.composite
def sets_of_hand(draw, pair: int | None):
    """Four sets and a pair as (kind, tiles) lists: pongs anywhere or a one-suit hand."""
    family = draw(st.sampled_from(["pongs", "flush", "honors"]))
    sets = []
    if family == "pongs":
        kinds = draw(st.lists(st.integers(0, 33), min_size=4, max_size=4, unique=True))
        sets = [("pong", [k] * 3) for k in kinds]
    elif family == "honors":
        kinds = draw(st.lists(st.integers(27, 33), min_size=4, max_size=4, unique=True))
        sets = [("pong", [k] * 3) for k in kinds]
    else:
        base = 9 * draw(st.integers(0, 2))
        for _ in range(4):
            if draw(st.booleans()):
                r = draw(st.integers(0, 6))
                sets.append(("chow", [base + r, base + r + 1, base + r + 2]))
            elif draw(st.booleans()):
                sets.append(("pong", [base + draw(st.integers(0, 8))] * 3))
            else:
                sets.append(("pong", [draw(st.integers(27, 33))] * 3))
    if pair is None:
        pair = draw(st.integers(0, 33))
    return sets, pair


@st.composite
def winning_situation(draw):
    win = draw(st.sampled_from(["self_draw", "discard", "discard", "rob_kong"]))
    n_winners = draw(st.integers(1, 3)) if win == "discard" else 1
    seats = draw(st.permutations([0, 1, 2, 3]))
    winners_seats = sorted(seats[:n_winners])
    feeder = seats[n_winners] if win in ("discard", "rob_kong") else None
    shared_pair = draw(st.integers(0, 33)) if n_winners > 1 else None
    flowers_left = list(range(34, 42))
    winners = []
    for seat in winners_seats:
        sets, pair = draw(sets_of_hand(shared_pair))
        concealed = [pair, pair]
        melds = []
        for kind, tiles in sets:
            lay_down = draw(st.booleans())
            others = [s for s in range(4) if s != seat]
            if lay_down and kind == "chow":
                melds.append(
                    {"kind": "chow", "tiles": T.format_tiles(tiles), "from": (seat - 1) % 4}
                )
            elif lay_down:
                mk = draw(st.sampled_from(["pong", "exposed_kong", "added_kong", "concealed_kong"]))
                n = 3 if mk == "pong" else 4
                m = {"kind": mk, "tiles": T.format_tiles([tiles[0]] * n)}
                if mk != "concealed_kong":
                    m["from"] = draw(st.sampled_from(others))
                melds.append(m)
            else:
                concealed.extend(tiles)
        if shared_pair is not None:
            win_tile = shared_pair
        elif win == "rob_kong":
            chow_tiles = [t for k, ts in sets for t in ts if k == "chow"]
            assume(chow_tiles)
            win_tile = draw(st.sampled_from(chow_tiles))
            assume(win_tile in concealed)
        else:
            win_tile = draw(st.sampled_from(concealed))
        concealed.remove(win_tile)
        n_flowers = draw(st.integers(0, min(7, len(flowers_left))))
        mine = draw(st.permutations(flowers_left))[:n_flowers]
        flowers_left = [f for f in flowers_left if f not in mine]
        winners.append(
            {
                "seat": seat,
                "concealed": T.format_tiles(concealed),
                "melds": melds,
                "flowers": T.format_tiles(mine),
                "win_tile": T.format_tile(win_tile),
            }
        )
    extra = draw(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=8))
    claims = [[s["seat"], m["from"]] for s in winners for m in s["melds"] if "from" in m]
    claims += [[a, b] for a, b in extra if a != b]
    obj = {
        "ruleset": draw(st.sampled_from(RULESETS)),
        "stake": draw(st.integers(1, 50)),
        "dealer": draw(st.integers(0, 3)),
        "dice": [draw(st.integers(1, 6)), draw(st.integers(1, 6))],
        "huangfan": draw(st.integers(0, 3)),
        "winners": winners,
        "win": win,
        "replacement": win == "self_draw" and draw(st.booleans()),
        "ready": sorted(set(winners_seats) | set(draw(st.lists(st.integers(0, 3), max_size=3)))),
        "claims": claims,
    }
    if feeder is not None:
        obj["from"] = feeder
    return obj


def settled(obj):
    try:
        return settle_win(win_input(obj))
    except InvalidArgument:
        assume(False)  # a generated hand that breaks a tile limit: not a winning situation


COMMON = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)


@COMMON
@given(winning_situation())
def test_payments_plus_house_sum_to_zero(obj):
    s = settled(obj)
    assert sum(s.payments) + s.house == 0
    assert sum(t.chips for t in s.transfers) == sum(p for p in s.payments if p > 0)


@COMMON
@given(winning_situation())
def test_no_payer_loses_more_than_the_loss_cap(obj):
    s = settled(obj)
    w = win_input(obj)
    cap = loss_cap_chips(scoring_rules(w.context.ruleset), w.context.stake)
    winners = {r.seat for r in s.winners}
    for seat, chips in enumerate(s.payments):
        if seat not in winners:
            assert -chips <= cap
        else:
            assert chips > 0


@COMMON
@given(winning_situation(), st.data())
def test_one_more_flower_never_lowers_a_value(obj, data):
    before = settled(obj)
    held = {f for w in obj["winners"] for f in T.parse(w["flowers"])}
    free = [f for f in range(34, 42) if f not in held]
    target = data.draw(st.sampled_from(range(len(obj["winners"]))))
    mine = T.parse(obj["winners"][target]["flowers"])
    assume(free and len(mine) < 7)
    extra = data.draw(st.sampled_from(free))
    obj["winners"][target]["flowers"] = T.format_tiles([*mine, extra])
    after = settled(obj)
    for a, b in zip(before.winners, after.winners, strict=True):
        assert b.value >= a.value
        if a.seat == obj["winners"][target]["seat"]:
            assert b.flowers == a.flowers + 1


@COMMON
@given(winning_situation())
def test_a_value_never_exceeds_its_cap(obj):
    s = settled(obj)
    rs = win_input(obj).context.ruleset
    lezi = rs.scoring.lezi_points
    for r in s.winners:
        assert 0 < r.value <= r.cap_lezi * lezi
        assert r.value <= rs.scoring.hand_cap_lezi * lezi
