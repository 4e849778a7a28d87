"""Checks of a settlement request before anything is settled (INVALID_ARGUMENT on bad input).

Every check raises :class:`shared.errors.InvalidArgument` with a message naming the problem:
a seat out of range, a stake that is not positive, a discarder who is also a winner, tiles
that do not add up (a wrong count, more than four copies of a kind counting melds and every
winner's hand, a flower twice), a claimed win that is no allowed winning hand (RULES §6) or is
won without the 敲 declaration the ruleset requires. The hand shapes and tile checks are the
shared ones (:mod:`shared.hand`), the same code the rules service judges with. Settling starts
only once everything has passed, so nothing is ever half-settled.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Protocol

from services.scoring.domain.chengbao import claims_from_melds
from services.scoring.domain.garden import check_garden_stacks
from services.scoring.domain.model import (
    Claim,
    HandContext,
    ReplacementAfter,
    WinInput,
    WinKind,
    WinnerHand,
)
from services.scoring.domain.rules import ScoringRules, scoring_rules
from shared import tiles as T
from shared.errors import InvalidArgument
from shared.hand import HandType, classify
from shared.hand.input import check_copies, check_flowers, check_melds, counts_from_tiles
from shared.melds import Meld, MeldKind
from shared.table import MAX_STAKE

ALL_FLOWERS = frozenset(range(T.FLOWER_BASE, T.EXTRA_BASE))
# the natural kinds: a superset test of a meld's tiles is the per-tile T.is_playing at once
PLAYING = frozenset(k for k in range(T.NUM_TILE_KINDS) if T.is_playing(k))


class CheckedWinner:
    """A winner that passed every check: its counts *with* the winning tile and its hand.

    A plain class: a frozen dataclass's ``__init__`` sets each field through
    ``object.__setattr__``, and every winner of every settlement builds one."""

    __slots__ = ("counts", "hand", "hand_type")

    def __init__(self, hand: WinnerHand, counts: list[int], hand_type: HandType) -> None:
        self.hand = hand
        self.counts = counts
        self.hand_type = hand_type

    def __repr__(self) -> str:
        return (
            f"CheckedWinner(hand={self.hand!r}, counts={self.counts!r}, "
            f"hand_type={self.hand_type!r})"
        )


def check_seat(seat: object, what: str) -> int:
    # the common case first: an int exactly (not a bool, not a subclass); else the full test
    if type(seat) is int and 0 <= seat <= 3:
        return seat
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat <= 3:
        raise InvalidArgument(f"{what} {seat!r} out of range 0-3", field=what)
    return seat


def check_context(ctx: HandContext, needs_dice: bool) -> None:
    """Stake, dealer, dice, 荒番 counter and 逛花园 stacks of the table."""
    stake = ctx.stake
    if (type(stake) is not int and (not isinstance(stake, int) or isinstance(stake, bool))) or (
        stake <= 0
    ):
        raise InvalidArgument(f"stake {stake!r} must be a positive number of chips", field="stake")
    if stake > MAX_STAKE:
        raise InvalidArgument(f"stake {stake} exceeds the largest stake {MAX_STAKE}", field="stake")
    check_seat(ctx.dealer, "dealer seat")
    hf = ctx.huangfan
    if (type(hf) is not int and (not isinstance(hf, int) or isinstance(hf, bool))) or hf < 0:
        raise InvalidArgument(f"荒番 counter {ctx.huangfan!r} must be 0 or more", field="huangfan")
    if ctx.dice is not None:
        if len(ctx.dice) != 2:
            raise InvalidArgument(f"dice {ctx.dice!r}: two dice are thrown", field="dice")
        for d in ctx.dice:
            if not isinstance(d, int) or isinstance(d, bool) or not 1 <= d <= 6:
                raise InvalidArgument(f"die {d!r} out of range 1-6", field="dice")
    elif needs_dice:
        raise InvalidArgument(
            f"the hand's dice are required: ruleset {ctx.ruleset.name} scores 开宝 or 骰子荒番",
            field="dice",
        )
    check_garden_stacks(ctx.ruleset, ctx.garden_stacks)
    for seat in ctx.doubled_seats:
        check_seat(seat, "doubled seat")


def check_win_request(w: WinInput, needs_dice: bool) -> None:
    """The checks of a won hand every scoring model makes: the context, the win kind, the
    winners' seats, the discarder or robbed seat, and the situations only a self-draw has
    (杠开, 海底捞月)."""
    check_context(w.context, needs_dice=needs_dice)
    if not isinstance(w.win, WinKind):
        raise InvalidArgument(f"unknown win kind {w.win!r}", field="win")
    if not w.winners:
        raise InvalidArgument("a won hand needs at least one winner", field="winners")
    if len(w.winners) > 3:
        raise InvalidArgument(f"{len(w.winners)} winners; at most 3 can win", field="winners")
    seats = [check_seat(h.seat, "winner seat") for h in w.winners]
    if len(set(seats)) != len(seats):
        raise InvalidArgument(f"winner seats {seats} name a seat twice", field="winners")
    if w.win.has_feeder:
        who = "discarder" if w.win is WinKind.DISCARD else "robbed seat"
        if w.from_seat is None:
            raise InvalidArgument(f"a {w.win.value} win needs the {who} (from)", field="from")
        check_seat(w.from_seat, f"{who} seat")
        if w.from_seat in seats:
            raise InvalidArgument(
                f"seat {w.from_seat} is both the {who} and a winner", field="from"
            )
    else:
        if len(seats) != 1:
            raise InvalidArgument(
                f"a {w.win.value} win has exactly one winner, not {len(seats)}", field="winners"
            )
        if w.from_seat is not None:
            raise InvalidArgument(
                f"a {w.win.value} win has no discarder, but from = {w.from_seat}", field="from"
            )
    if w.replacement and not w.win.is_self_draw:
        raise InvalidArgument(
            f"a replacement-draw win (杠开) is a self-draw, not a {w.win.value} win",
            field="replacement",
        )
    if w.last_tile and not w.win.is_self_draw:
        raise InvalidArgument(
            f"the last tile of the wall (海底捞月) is a self-draw, not a {w.win.value} win",
            field="last_tile",
        )
    if not isinstance(w.replacement_after, ReplacementAfter):
        raise InvalidArgument(
            f"replacement_after {w.replacement_after!r}: kong or flower",
            field="replacement_after",
        )
    for s in w.ready:
        check_seat(s, "ready seat")


def check_win(w: WinInput) -> list[CheckedWinner]:
    """Every check of a won hand under the 敲麻 model; returns the winners with their counts
    and hand types."""
    ctx = w.context
    r = scoring_rules(ctx.ruleset)
    check_win_request(w, needs_dice=r.kaibao or r.dice_huangfan)
    if w.first_go_around:
        for h in w.winners:
            for m in h.melds:
                if m.kind is not MeldKind.CONCEALED_KONG:
                    raise InvalidArgument(
                        f"a win in the first go-around comes before any claim, but seat "
                        f"{h.seat} shows a {m.kind.label}",
                        field="first_go_around",
                    )
    if w.claims is not None:
        for c in w.claims:
            check_seat(c.claimer, "claimer seat")
            check_seat(c.claimed_from, "claimed-from seat")
            if c.claimer == c.claimed_from:
                raise InvalidArgument(f"claim by seat {c.claimer} from itself", field="claims")
    checked = [_check_winner(w, h, r) for h in w.winners]
    check_tiles_add_up(w, checked)
    if w.claims is not None:
        _check_claims_cover_melds(w, w.claims)
    return checked


def check_natural_melds(melds: Sequence[Meld], what: str) -> None:
    """Valid meld shapes of playing tiles only (no 百搭, no bonus tile in a declared set)."""
    check_melds(melds, what)
    for m in melds:
        if not PLAYING.issuperset(m.tiles):
            raise InvalidArgument(
                f"{what}: {m.kind.label} {T.format_tiles(m.tiles)}: a declared meld holds "
                "playing tiles only (no 百搭, no bonus tile)",
                field="melds",
            )


def check_claimed_melds(h: WinnerHand, who: str) -> None:
    """The winner's melds: valid shapes of playing tiles, each claimed one from another
    seat."""
    check_natural_melds(h.melds, f"{who} melds")
    for m in h.melds:
        if m.kind is MeldKind.CONCEALED_KONG:
            continue
        if m.from_seat is None:
            raise InvalidArgument(
                f"{who}: {m.kind.label} {T.format_tiles(m.tiles)} names no seat "
                "it was claimed from",
                field="melds",
            )
        check_seat(m.from_seat, f"{who} meld from seat")
        if m.from_seat == h.seat:
            raise InvalidArgument(
                f"{who}: {m.kind.label} {T.format_tiles(m.tiles)} claimed from itself",
                field="melds",
            )


def check_win_tile_kind(win_tile: object, who: str) -> None:
    if not T.is_valid_kind(win_tile):
        raise InvalidArgument(f"{who}: winning tile {win_tile!r} is not a tile", field="win_tile")


def check_complete_hand(w: WinInput, h: WinnerHand, counts: list[int], who: str) -> list[int]:
    """The concealed ``counts`` (without the winning tile) and melds with a natural winning
    tile: 14 tiles, no kind five times, a robbed kong's tile not held; returns the counts with
    the winning tile."""
    win_tile = h.win_tile
    if not T.is_playing(win_tile):
        raise InvalidArgument(
            f"{who}: {T.format_tile(win_tile)} is no natural hand tile; it completes no hand "
            "here (a flower only 八花齐)",
            field="win_tile",
        )
    size = sum(counts) + 3 * len(h.melds)
    full = list(counts)
    full[win_tile] += 1
    if size + 1 != 14:
        raise InvalidArgument(
            f"{who} has {sum(counts)} concealed tiles + the winning tile and {len(h.melds)} "
            f"melds: {size + 1} tiles in all (a kong counts as 3); a winning hand has 14",
            field="concealed",
        )
    check_copies(full, h.melds, who)
    if w.win is WinKind.ROB_KONG:
        held = counts[win_tile] + sum(m.tiles.count(win_tile) for m in h.melds)
        if held:
            raise InvalidArgument(
                f"{who} robs a kong of {T.format_tile(win_tile)} but holds {held} more: the "
                "robbed player held the other three",
                field="win_tile",
            )
    return full


def _check_winner(w: WinInput, h: WinnerHand, r: ScoringRules) -> CheckedWinner:
    ctx = w.context
    who = f"seat {h.seat}"
    check_claimed_melds(h, who)
    check_flowers(h.flowers, f"{who} flowers")
    counts = counts_from_tiles(h.concealed, f"{who} concealed tiles")
    win_tile = h.win_tile
    check_win_tile_kind(win_tile, who)
    size = sum(counts) + 3 * len(h.melds)
    if w.win is WinKind.EIGHT_FLOWERS:
        if not T.is_flower(win_tile):
            raise InvalidArgument(
                f"{who}: 八花齐 is won on the eighth flower, not on {T.format_tile(win_tile)}",
                field="win_tile",
            )
        held = set(h.flowers) | {win_tile}
        if held != ALL_FLOWERS:
            missing = T.format_tiles(sorted(ALL_FLOWERS - held)) or "none"
            raise InvalidArgument(
                f"{who}: 八花齐 needs all 8 flowers once each; missing {missing}",
                field="flowers",
            )
        # 13: the eighth flower just drawn; 14: after its replacement draw (the rules offer
        # 八花齐 on the seat's own turn, holding the replacement), or the dealer at the deal.
        if size not in (13, 14):
            raise InvalidArgument(
                f"{who} holds {size} tiles (a kong counts as 3); 八花齐 is won holding 13, or 14 "
                "after the replacement draw",
                field="concealed",
            )
        check_copies(counts, h.melds, who)
        return CheckedWinner(h, counts, HandType.EIGHT_FLOWERS)
    full = check_complete_hand(w, h, counts, who)
    hand = classify(full, h.melds, ctx.ruleset)
    if hand is None:
        raise not_a_win(who, full, h.melds, "is no allowed winning hand (RULES §6)")
    if r.require_ready and h.seat not in w.ready and not (r.heavenly_earthly and w.first_go_around):
        raise InvalidArgument(
            f"{who} wins without having declared ready (敲), which ruleset {r.name} requires",
            field="ready",
            reason="NOT_A_WIN",
        )
    return CheckedWinner(h, full, hand)


def not_a_win(who: str, counts: Sequence[int], melds: Sequence[Meld], why: str) -> InvalidArgument:
    """The error for a claimed win that is none: ``who`` claims a win but <tiles> ``why``."""
    shown = T.format_tiles(T.from_counts(counts))
    laid = " ".join(T.format_tiles(m.tiles) for m in melds)
    return InvalidArgument(
        f"{who} claims a win but {shown}{' + ' + laid if laid else ''} {why}",
        field="winners",
        reason="NOT_A_WIN",
    )


class CheckedHand(Protocol):
    """What the checks across winners read of a checked winner, whichever scoring model
    checked it (:class:`CheckedWinner`, or a preset's own)."""

    @property
    def hand(self) -> WinnerHand: ...

    @property
    def counts(self) -> list[int]: ...


def winners_tiles(w: WinInput, checked: Sequence[CheckedHand]) -> list[int]:
    """Copies of each kind the winners hold (counts with the winning tile, and melds), one
    discarded winning tile counted once however many win on it."""
    total = [0] * T.NUM_KINDS
    for c in checked:
        for k, n in enumerate(c.counts):
            total[k] += n
        for m in c.hand.melds:
            for k in m.tiles:
                total[k] += 1
    if w.win.has_feeder:
        total[w.winners[0].win_tile] -= len(checked) - 1
    return total


def check_tiles_add_up(w: WinInput, checked: Sequence[CheckedHand]) -> None:
    """Across winners: no kind more than 4 times (the shared winning tile once), no flower
    twice."""
    if len(checked) == 1:
        return  # one hand: its own copies and flowers were checked with it
    total = winners_tiles(w, checked)
    flowers: Counter = Counter()
    for c in checked:
        flowers.update(c.hand.flowers)
    if w.win.has_feeder:
        tiles = {c.hand.win_tile for c in checked}
        if len(tiles) > 1:
            raise InvalidArgument(
                "winners on one discard must win on the same tile, not "
                + ", ".join(T.format_tile(t) for t in sorted(tiles)),
                field="win_tile",
            )
    for k, n in enumerate(total):
        if n > T.COPIES:
            raise InvalidArgument(
                f"the winners hold {n} copies of {T.format_tile(k)}; there are only {T.COPIES}",
                field="winners",
                tile=T.format_tile(k),
            )
    for f, n in flowers.items():
        if n > 1:
            raise InvalidArgument(
                f"flower {T.format_tile(f)} held by {n} winners; each flower exists once",
                field="flowers",
            )


def _check_claims_cover_melds(w: WinInput, given: tuple[Claim, ...]) -> None:
    """Every claimed meld of a winner must be among the hand's claims (``given``)."""
    claims = Counter((c.claimer, c.claimed_from) for c in given)
    needed = Counter((c.claimer, c.claimed_from) for c in claims_from_melds(w.winners))
    for (claimer, source), n in needed.items():
        if claims[claimer, source] < n:
            raise InvalidArgument(
                f"seat {claimer} shows {n} melds claimed from seat {source} but the claims list "
                f"only {claims[claimer, source]}",
                field="claims",
            )
