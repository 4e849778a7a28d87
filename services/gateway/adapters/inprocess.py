"""In-process adapters: the engine's ports answered by the wall, rules and scoring domain
packages directly (unit tests, the domain-only benchmark, ``mahjong replay verify``).

Each adapter counts its calls (:class:`~services.gateway.domain.ports.CallCounter`), so the
benchmark can report how many service calls an action costs in the real stack.
"""

from __future__ import annotations

import contextlib
import functools
import secrets
from collections.abc import Iterator, Mapping

from services.gateway.domain.ports import (
    BreakdownItem,
    CallCounter,
    HandFacts,
    Settlement,
    WallDraw,
    WallFenced,
    WallHand,
    WallReveal,
    WinnerResult,
    flip_call_id,
    wall_call_id,
)
from services.rules import domain as rules_domain
from services.scoring import domain as scoring_domain
from services.wall.domain import shuffle
from services.wall.domain.record import HandWall, StaleOwner
from shared.ruleset import resolve_ruleset
from shared.table import Action, ClaimOptions, ClaimResolution, OwnTurnOptions, TableSnapshot
from shared.tile_set import tile_set_of


class InProcessWall:
    """Walls held in memory, built by the wall domain (services.wall.domain.record.HandWall)."""

    def __init__(self, counter: CallCounter | None = None, *, keep: int = 64) -> None:
        self.hands: dict[str, HandWall] = {}
        self.counter = counter or CallCounter()
        self.keep = keep

    def new_hand(
        self, ruleset_name: str, overrides: Mapping[str, str], dealer: int, request_id: str
    ) -> WallHand:
        self.counter.wall += 1
        ruleset = resolve_ruleset(ruleset_name, overrides)
        swap = ruleset.table.tile_swap_count if ruleset.table.tile_swap else 0
        hand = HandWall.create(
            "h_" + secrets.token_hex(8),
            shuffle.new_seed(),
            dealer,
            reserved=ruleset.table.reserved_tiles,
            swap_count=swap,
            tile_set=tile_set_of(ruleset),
        )
        if len(self.hands) >= self.keep:  # keep memory bounded in long benchmark runs
            self.hands.pop(next(iter(self.hands)))
        self.hands[hand.hand_id] = hand
        return WallHand(hand.hand_id, hand.dice, hand.commitment.hex(), hand.wall.remaining)

    def deal(self, hand_id: str) -> tuple[list[list[int]], int]:
        self.counter.wall += 1
        hand = self.hands[hand_id]
        return hand.deal(), hand.wall.remaining

    # Request ids as the remote wall gets them, so a fenced caller (``epoch``) is answered
    # the same way; unfenced, a number is not needed: an in-process answer cannot be lost.
    def draw(self, hand_id: str, seat: int, number: int = 0, *, epoch: int = 0) -> WallDraw:
        self.counter.wall += 1
        hand = self.hands[hand_id]
        try:  # _fenced(), inlined: a draw is the hot path, a context manager costs a third of it
            event = hand.draw(seat, _rid(hand_id, number, epoch) if epoch else "", epoch)
        except StaleOwner as exc:
            raise WallFenced(exc.message, **exc.details) from exc
        return _new_draw((event.tiles[0], hand.wall.remaining))

    def draw_replacement(
        self, hand_id: str, seat: int, number: int = 0, *, epoch: int = 0
    ) -> WallDraw:
        self.counter.wall += 1
        hand = self.hands[hand_id]
        try:  # _fenced(), inlined (as in draw)
            event = hand.draw_replacement(
                seat, _rid(hand_id, number, epoch) if epoch else "", epoch
            )
        except StaleOwner as exc:
            raise WallFenced(exc.message, **exc.details) from exc
        return _new_draw((event.tiles[0], hand.wall.remaining))

    def flip_indicator(self, hand_id: str, *, epoch: int = 0) -> tuple[list[int], int]:
        self.counter.wall += 1
        hand = self.hands[hand_id]
        with _fenced():
            event = hand.flip_indicator(flip_call_id(hand_id) if epoch else "", epoch)
        return list(event.tiles), hand.wall.remaining

    def swap(
        self, hand_id: str, seat: int, buried: list[int], number: int = 0, *, epoch: int = 0
    ) -> list[int]:
        self.counter.wall += 1
        with _fenced():
            event = self.hands[hand_id].swap(seat, buried, _rid(hand_id, number, epoch), epoch)
        return list(event.tiles)

    def reveal(self, hand_id: str, number: int = 0, *, epoch: int = 0) -> WallReveal:
        self.counter.wall += 1
        hand = self.hands[hand_id]
        with _fenced():
            hand.reveal(epoch, _rid(hand_id, number, epoch))
        return WallReveal(hand.seed.hex(), hand.commitment.hex())


# WallDraw (a named tuple) by tuple.__new__ directly, without its Python-level __new__.
_new_draw = functools.partial(tuple.__new__, WallDraw)


def _rid(hand_id: str, number: int, epoch: int) -> str:
    return wall_call_id(hand_id, number) if epoch and number else ""


@contextlib.contextmanager
def _fenced() -> Iterator[None]:
    """The wall's StaleOwner refusal as the port's WallFenced."""
    try:
        yield
    except StaleOwner as exc:
        raise WallFenced(exc.message, **exc.details) from exc


class InProcessRules:
    """The rules domain called directly."""

    def __init__(self, counter: CallCounter | None = None) -> None:
        self.counter = counter or CallCounter()

    def own_turn_options(self, snapshot: TableSnapshot, seat: int) -> OwnTurnOptions:
        self.counter.rules += 1
        return rules_domain.own_turn_options(snapshot, seat)

    def claim_options(self, snapshot: TableSnapshot) -> dict[int, ClaimOptions]:
        self.counter.rules += 1
        return rules_domain.claim_options_by_seat(snapshot)

    def resolve_claims(
        self, snapshot: TableSnapshot, claims: Mapping[int, Action]
    ) -> ClaimResolution:
        self.counter.rules += 1
        return rules_domain.resolve_claims(snapshot, claims)


def settlement_from_domain(st) -> Settlement:
    """The scoring domain's settlement in the engine's terms."""
    return Settlement(
        payments=tuple(st.payments),  # type: ignore[arg-type]
        house=st.house,
        winners=tuple(WinnerResult(w.seat, int(w.hand), w.flowers, w.value) for w in st.winners),
        next_dealer=st.next_dealer,
        next_huangfan=st.next_huangfan,
        breakdown=tuple(
            BreakdownItem(
                it.seat,
                it.code,
                f"{it.label_zh} {it.label}" + (f": {it.detail}" if it.detail else ""),
                it.amount,
                it.other_seat,
            )
            for it in st.breakdown
        ),
    )


def context_of(
    ruleset_name, overrides, stake, dealer, dice, huangfan, garden_stacks=None, doubled_seats=()
):
    """The scoring domain's HandContext of a hand (``garden_stacks``: 逛花园 chips by seat;
    ``doubled_seats``: seats that played a 加倍卡)."""
    return scoring_domain.HandContext(
        ruleset=resolve_ruleset(ruleset_name, overrides),
        stake=stake,
        dealer=dealer,
        dice=dice,
        huangfan=huangfan,
        garden_stacks=None if garden_stacks is None else tuple(garden_stacks),
        doubled_seats=frozenset(doubled_seats),
    )


def facts_context(facts: HandFacts):
    """The scoring domain's HandContext of a finished hand's facts."""
    return context_of(
        facts.ruleset_name,
        facts.overrides,
        facts.stake,
        facts.dealer,
        facts.dice,
        facts.huangfan,
        facts.garden_stacks,
        facts.doubled_seats,
    )


def win_input_of(facts: HandFacts):
    """The scoring domain's WinInput of a won hand's facts."""
    ctx = facts_context(facts)
    winners = tuple(
        scoring_domain.WinnerHand(
            seat=w.seat,
            concealed=w.concealed,
            melds=w.melds,
            flowers=w.flowers,
            win_tile=w.win_tile if w.win_tile is not None else w.flowers[-1],
        )
        for w in facts.winners
    )
    return scoring_domain.WinInput(
        context=ctx,
        winners=winners,
        win=scoring_domain.WinKind(facts.win),
        from_seat=facts.from_seat,
        replacement=facts.replacement,
        ready=frozenset(facts.ready),
        claims=tuple(scoring_domain.Claim(c, f, feeder_ready=r) for c, f, r in facts.claims),
        first_go_around=facts.first_go_around,
        last_tile=facts.last_tile,
        replacement_after=scoring_domain.ReplacementAfter(facts.replacement_after),
        feeder_hand=None
        if facts.feeder_hand is None
        else scoring_domain.FeederHand(*facts.feeder_hand),
        wild_indicator=facts.wild_indicator,
        visible=facts.visible,
    )


class InProcessScoring:
    """The scoring domain called directly."""

    def __init__(self, counter: CallCounter | None = None) -> None:
        self.counter = counter or CallCounter()

    def settle_win(self, facts: HandFacts) -> Settlement:
        self.counter.scoring += 1
        return settlement_from_domain(scoring_domain.settle_win(win_input_of(facts)))

    def settle_draw(self, facts: HandFacts) -> Settlement:
        self.counter.scoring += 1
        ctx = facts_context(facts)
        return settlement_from_domain(scoring_domain.settle_draw(ctx))

    def settle_escape(
        self, ruleset_name, overrides, stake, seat, dealer, huangfan, garden_stacks=None
    ) -> Settlement:
        self.counter.scoring += 1
        ctx = context_of(ruleset_name, overrides, stake, dealer, None, huangfan, garden_stacks)
        return settlement_from_domain(scoring_domain.settle_escape(ctx, seat))
