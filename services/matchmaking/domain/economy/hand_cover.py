"""Covering a hand (RULES-items §4): the most one hand can cost a seat at a stake, ``loss_cap``,
and the rule that a player takes a rated or room seat only with silver ≥ it (checked again at
every hand: 破产, the player leaves after the hand).

What a hand can cost follows from the table's ruleset (its preset and house rules):

* the qiaoma model (上海敲麻, the default): RULES §9's per-player loss cap,
  ``payment.loss_cap_lezi`` 勒子 × ``scoring.lezi_points`` × stake — what scoring applies last,
  per payer (services/scoring/domain/loss_cap.py). With ``loss_cap_lezi`` 0 nothing bounds a
  hand (开宝 and 荒番 lift the table cap), so no silver seat can be covered.
* the baida model (百搭, RULES-presets §13.B.7): self-draw only, each other seat pays one share
  of a value capped at ``baida_scoring.hand_cap_points``: that × stake (0 = no cap: uncoverable).
* the old model (老麻将, §13.A.8): a share is at most ``old_scoring.limit_hu`` × stake; a payer
  pays at most the largest number of shares one winner collects from it (self-draw, 出冲's
  discarder, 包冲), once per winner, and up to three winners take one discard (一炮多响):
  3 × that (``limit_hu`` 0 = uncoverable).
* every model: an escape (逃跑) costs ``payment.escape_penalty_base`` × stake × 底分, where 底分
  is the model's base (RULES §9, RULES-presets §13): the cover is at least that.

A 加倍卡 doubles the player's own cap (RULES-items §2): :func:`loss_cap` with ``doubled``.
A table's room service fee (台费, RULES.md §9a) is paid on top of the cover: a seat needs
silver ≥ cover + fee (:func:`require_cover` with ``fee``).
"""

from __future__ import annotations

from collections.abc import Mapping

from shared.errors import FailedPrecondition
from shared.ruleset import Ruleset, resolve_ruleset


def _model_cap(rs: Ruleset, stake: int) -> int | None:
    model = rs.table.scoring_model
    if model == "baida":
        cap = rs.baida_scoring.hand_cap_points
        return cap * stake if cap else None
    if model == "old":
        limit = rs.old_scoring.limit_hu
        p = rs.old_payment
        shares = max(
            p.self_draw_shares,
            p.chuchong_discarder_shares,
            p.baochong_shares,
            p.discarder_only_shares,
            p.get("baoshu_shares", 0),
        )
        return 3 * shares * limit * stake if limit else None
    lezi = rs.payment.loss_cap_lezi
    return lezi * rs.scoring.lezi_points * stake if lezi else None


def _escape_penalty(rs: Ruleset, stake: int) -> int:
    model = rs.table.scoring_model
    if model == "baida":
        base = rs.baida_scoring.base_points
    elif model == "old":
        base = rs.old_hu.win
    else:
        base = rs.scoring.base_points + rs.flowers.base
    return rs.payment.escape_penalty_base * stake * base


def loss_cap(
    ruleset: str, options: Mapping[str, str] | None, stake: int, doubled: bool = False
) -> int | None:
    """The most one hand at ``stake`` can cost a seat under the ruleset (chips = silver); None
    when nothing bounds it. ``doubled``: the seat played a 加倍卡 (its cap is doubled)."""
    rs = resolve_ruleset(ruleset, dict(options or {}))
    cap = _model_cap(rs, stake)
    if cap is None:
        return None
    cap = max(cap, _escape_penalty(rs, stake))
    return 2 * cap if doubled else cap


def require_cover(
    player_id: str,
    silver: int,
    ruleset: str,
    options: Mapping[str, str] | None,
    stake: int,
    fee: int = 0,
) -> int:
    """The silver a seat at ``stake`` needs: the cover plus the table's room service fee
    ``fee``; FailedPrecondition when ``silver`` does not cover it (SILVER_BELOW_COVER, naming
    the amount; SILVER_BELOW_COVER_AND_FEE, naming the cover, the fee and the shortfall, when
    the fee is what it lacks) or nothing bounds a hand (NO_LOSS_CAP)."""
    needed = loss_cap(ruleset, options, stake)
    if needed is None:
        raise FailedPrecondition(
            f"ruleset {ruleset} bounds no hand's cost (no loss cap): no silver seat can be "
            "covered; play it at casual tables, or set a cap in the house rules",
            reason="NO_LOSS_CAP",
            ruleset=ruleset,
        )
    if silver < needed:
        raise FailedPrecondition(
            f"player {player_id} has {silver} silver; a seat at stake {stake} ({ruleset}) "
            f"needs {needed}, the most one hand can cost (RULES-items §4)",
            reason="SILVER_BELOW_COVER",
            player_id=player_id,
            silver=silver,
            needed=needed,
            stake=stake,
        )
    if silver < needed + fee:
        short = needed + fee - silver
        raise FailedPrecondition(
            f"player {player_id} has {silver} silver; a seat at stake {stake} ({ruleset}) "
            f"needs {needed + fee}: the cover {needed} plus the room service fee (台费) of "
            f"{fee} a hand; short by {short} (RULES.md §9a)",
            reason="SILVER_BELOW_COVER_AND_FEE",
            player_id=player_id,
            silver=silver,
            needed=needed + fee,
            cover=needed,
            fee=fee,
            short=short,
            stake=stake,
        )
    return needed + fee


def covered_stakes(
    silver: int, ruleset: str, options: Mapping[str, str] | None, tiers, fee: int = 0
) -> list[int]:
    """The tiers among ``tiers`` that ``silver`` covers, with a room service fee ``fee``."""
    return [
        s for s in tiers if (c := loss_cap(ruleset, options, s)) is not None and silver >= c + fee
    ]
