"""A property of the economy with 加倍卡 (issue 21): random hands at random stakes, with and
without double cards, settled by the scoring domain and recorded through matchmaking, never
leave a player below zero in any asset and keep the ledger balanced per asset — as long as
every seat covers the most a hand costs and every doubled seat twice that (RULES-items §2, §4),
which is what HoldDoubleCard checks."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.matchmaking.domain.economy import double_cards, ledger
from services.matchmaking.domain.economy.ledger import HandReport
from services.scoring.domain.collect import collect
from services.scoring.domain.loss_cap import loss_cap_chips
from services.scoring.domain.model import HandContext
from services.scoring.domain.rules import scoring_rules
from shared.errors import FailedPrecondition
from shared.ruleset import load_ruleset
from tests.unit.matchmaking.mm_fakes import give, make_service, seated_quick_table

QIAOMA = load_ruleset("shanghai-qiaoma")
CAP_PER_STAKE = loss_cap_chips(scoring_rules(QIAOMA), 1)  # 50 chips at stake 1

hand = st.fixed_dictionaries(
    {
        "winner": st.integers(0, 3),
        "points": st.integers(1, 200),  # before the table cap: up to 4 × the 50-point cap
        "self_draw": st.booleans(),
        "feeder": st.integers(1, 3),
        "doubled": st.frozensets(st.integers(0, 3), max_size=4),
    }
)


def setup():
    mm, alloc, _ = make_service()
    tid, tag, ids, _ = seated_quick_table(mm, alloc)
    for pid in ids:
        give(mm, pid, ledger.DOUBLE_CARD, 50)
    return mm, tid, tag, ids


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(hand, st.integers(1, 8)), min_size=1, max_size=12))
def test_random_hands_with_double_cards_never_overdraw_and_stay_balanced(hands):
    mm, tid, tag, ids = setup()
    for number, (h, stake) in enumerate(hands, start=1):
        cap = CAP_PER_STAKE * stake
        # a seat that cannot cover the hand leaves (破产); a card needs twice the cover
        if any(ledger.balance(mm.store, p) < cap for p in ids):
            break
        doubled = set()
        for seat in sorted(h["doubled"]):
            try:
                mm.hold_double_card(tid, tag, ids[seat], number, stake)
                doubled.add(seat)
            except FailedPrecondition as exc:
                assert exc.reason in ("DOUBLE_CARD_SILVER", "DOUBLE_CARD_NONE_LEFT")
        value = min(h["points"], 50) * stake  # the table cap, in chips
        w = h["winner"]
        payers = [(w + s) % 4 for s in (1, 2, 3)] if h["self_draw"] else [(w + h["feeder"]) % 4]
        debts = {p: [(w, value)] for p in payers}
        ctx = HandContext(QIAOMA, stake, 0, doubled_seats=frozenset(doubled))
        _, payments, _ = collect(debts, ctx, cap)
        report = HandReport(
            f"h{number}", tid, tag, ids, tuple(payments), hand_number=number,
            doubled_seats=tuple(sorted(doubled)),
        )  # fmt: skip
        new, bankrupt, _ = mm.hand_answer(report)
        assert new is True  # never refused: everyone covered their loss
        for p in ids:
            for asset, amount in ledger.balances(mm.store, p).items():
                assert amount >= 0, (p, asset, amount)
        for seat in doubled:
            hold = double_cards.hold_account(tid, number, ids[seat])
            assert ledger.balance(mm.store, hold, ledger.DOUBLE_CARD) == 0  # consumed once
        if bankrupt:  # 破产: a seat no longer covers the table's stake; a bot takes it
            break
    mm.table_finished(tid, tag, len(hands))
    assert ledger.reconcile(mm.store) == []
    total = sum(ledger.balance(mm.store, a, ledger.DOUBLE_CARD) for a in (*ids, ledger.HOUSE))
    assert total == 0  # double cards balance per asset: players + house (holds are empty)
