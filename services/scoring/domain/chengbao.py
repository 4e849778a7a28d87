"""承包 liability (RULES §9; seeds 000/002/003/004, and seed 001's 承包 and 反承包).

Two players are in a relation once one has chowed, ponged or kong-claimed from the other
``chengbao_threshold`` (3) or more times. When the winner W claimed from F, F is liable (承包,
the ``chengbao_*`` shares); when F claimed from W (反承包, the ``fan_chengbao_*`` shares), F
pays for W's win too. shanghai-qiaoma gives both directions the same shares (包含反承包在内);
shanghai-classic gives 反承包 its own. With ``chengbao_excludes_declared_feeder`` a claim from
a player who had already declared 敲 does not count (§5).

What one relation makes each player pay, in shares of W's value (:func:`relation_shares`):

* F discarded the winning tile: F pays ``discard``.
* an unrelated player D discarded it: D pays ``unready_outsider`` and F
  ``unready_outsider_liable`` when D had not declared 敲, else ``ready_outsider`` and
  ``ready_outsider_liable``.
* W self-drew (杠开 and 八花齐 included): F pays ``self_draw``, every other player
  ``self_draw_others``.
* 抢杠: the robbed player pays ``payment.rob_kong_shares`` and F pays ``rob_kong``.

Decisions (RULES §9 says "each relation applies (重复计算)"):

* Several relations: each relation's payments are worked out as if it were the only one, and
  each player pays the largest amount any of them sets for it. So two liable players each pay
  their full liability, while the discarder, who appears in both, is not charged twice for the
  same discard.
* A pair with claims both ways is one relation in qiaoma (same shares); in classic both 承包
  and 反承包 apply and the larger counts, by the same rule.
* 1炮2响 between the two sides of a relation: a co-winner pays nothing (the discarder pays each
  winner its outsider shares), see :mod:`services.scoring.domain.payments`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from services.scoring.domain.model import Claim, WinKind, WinnerHand
from shared.melds import MeldKind
from shared.ruleset import Ruleset


@dataclass(frozen=True, slots=True)
class ChengbaoTable:
    """The shares of one direction of a relation (see module doc)."""

    code: str  # breakdown code of the liable player's payment
    discard: int
    unready_outsider: int
    unready_outsider_liable: int
    ready_outsider: int
    ready_outsider_liable: int
    self_draw: int
    self_draw_others: int
    rob_kong: int


_FIELDS = (
    "discard",
    "unready_outsider",
    "unready_outsider_liable",
    "ready_outsider",
    "ready_outsider_liable",
    "self_draw",
    "self_draw_others",
    "rob_kong",
)


def chengbao_table(ruleset: Ruleset, reverse: bool) -> ChengbaoTable:
    """承包 shares (``reverse`` False) or 反承包 shares (True) from ``[payment]``."""
    prefix = "fan_chengbao" if reverse else "chengbao"
    p = ruleset.payment
    values = [getattr(p, f"{prefix}_{name}_shares") for name in _FIELDS]
    return ChengbaoTable("PAY_FAN_CHENGBAO" if reverse else "PAY_CHENGBAO", *values)


def claims_from_melds(winners: Iterable[WinnerHand]) -> tuple[Claim, ...]:
    """The claims the winners' exposed melds show (an added kong was claimed once, as a pong):
    the hand's claims when the caller gives none."""
    claims = []
    for h in winners:
        for m in h.melds:
            if m.kind is not MeldKind.CONCEALED_KONG:
                assert m.from_seat is not None  # an exposed meld names its source (Meld checks)
                claims.append(Claim(h.seat, m.from_seat))
    return tuple(claims)


def claim_counts(claims: Iterable[Claim], excludes_declared_feeder: bool) -> Counter:
    """Claims per (claimer, claimed_from) pair that count towards 承包."""
    counts: Counter = Counter()
    for c in claims:
        if excludes_declared_feeder and c.feeder_ready:
            continue
        counts[c.claimer, c.claimed_from] += 1
    return counts


@dataclass(frozen=True, slots=True)
class Relation:
    """A 承包 relation of ``winner`` with ``partner``; ``reverse``: the partner is the one who
    claimed (反承包). ``claims`` is how many claims made it."""

    winner: int
    partner: int
    claims: int
    reverse: bool


def relations_of(winner: int, counts: Counter, threshold: int) -> list[Relation]:
    """The winner's relations, in turn order after the winner (承包 before 反承包)."""
    out: list[Relation] = []
    if threshold <= 0:
        return out
    for step in (1, 2, 3):
        partner = (winner + step) % 4
        fed = counts.get((winner, partner), 0)
        if fed >= threshold:
            out.append(Relation(winner, partner, fed, reverse=False))
        fed_back = counts.get((partner, winner), 0)
        if fed_back >= threshold:
            out.append(Relation(winner, partner, fed_back, reverse=True))
    return out


def relation_shares(
    rel: Relation,
    table: ChengbaoTable,
    win: WinKind,
    from_seat: int | None,
    ready: frozenset[int],
    rob_kong_shares: int,
) -> dict[int, tuple[int, str, str]]:
    """What ``rel`` alone makes each player pay: payer -> (shares, code, why)."""
    w, f = rel.winner, rel.partner
    side = "反承包" if rel.reverse else "承包"
    tie = f"{side} with seat {f}"
    out: dict[int, tuple[int, str, str]] = {}

    def owe(payer: int, shares: int, code: str, why: str) -> None:
        if shares > 0 and payer != w:
            prev = out.get(payer)
            if prev is None or shares > prev[0]:
                out[payer] = (shares, code, why)

    if win is WinKind.DISCARD:
        assert from_seat is not None  # a discard win has its discarder (validated)
        d = from_seat
        if d == f:
            owe(f, table.discard, table.code, f"{tie}: the liable player discarded the tile")
        elif d in ready:
            owe(d, table.ready_outsider, "PAY_OUTSIDER_READY", f"{tie}: discarder had declared 敲")
            owe(f, table.ready_outsider_liable, table.code, f"{tie}: beside a ready discarder")
        else:
            owe(d, table.unready_outsider, "PAY_OUTSIDER_UNREADY", f"{tie}: discarder not ready")
            owe(f, table.unready_outsider_liable, table.code, f"{tie}: beside an unready discarder")
    elif win is WinKind.ROB_KONG:
        assert from_seat is not None  # a robbed kong has its declarer (validated)
        owe(from_seat, rob_kong_shares, "PAY_ROB_KONG", "the added kong was robbed (抢杠)")
        owe(f, table.rob_kong, table.code, f"{tie}: 抢杠 counts as a self-draw")
    else:
        owe(f, table.self_draw, table.code, f"{tie}: self-drawn win")
        for step in (1, 2, 3):
            other = (w + step) % 4
            if other != f:
                owe(other, table.self_draw_others, "PAY_SELF_DRAW", f"{tie}: the others' share")
    return out
