"""Scoring domain: exact, explainable settlement of a Shanghai Mahjong hand (RULES §8-§10,
RULES-presets §13.A-B).

Pure Python, no gRPC. Entry points (all in :mod:`.settle`, which hands each request to the
scoring model of its ruleset, ``table.scoring_model``: :mod:`.models`):

* ``settle_win(WinInput) -> Settlement`` — a won hand: one or several winners (一炮多响), by
  self-draw, discard, 抢杠 or 八花齐.
* ``settle_draw(HandContext) -> Settlement`` — a drawn hand (流局).
* ``settle_escape(HandContext, seat) -> Settlement`` — a player escapes a running hand.

Inputs and outputs are in :mod:`.model` (mirroring tests/vectors/scoring.jsonl); bad input
raises :class:`shared.errors.InvalidArgument` before anything is computed.

Where each rule lives, one concept per module. The 敲麻 model (:mod:`.qiaoma`):

==================  ============================================================================
``flowers``         花 sources of the winner (花牌, 底注花, kongs, honor pongs and held triplets)
``situations``      门清, 开宝, 大吊车, 天胡/地胡, dice 荒番 (and the open points decided there)
``value``           the §8 value pipeline: raw, 杠开/大吊车 floor, multipliers, hand/table cap
``payments``        self-draw, discard, 抢杠, 一炮多响 shares
``chengbao``        承包 and 反承包 relations and what each makes every player pay
``loss_cap``        the per-player loss cap, proportional scaling and its rounding
``garden``          逛花园 stacks: a player at 0 pays no more
``escape``          escape penalty, 75% to the other three, 25% and the remainder to the house
``bookkeeping``     next dealer and the 荒番 counter (§2, §10)
``breakdown``       the itemized breakdown, every item named in English with the Chinese term
``validate``        INVALID_ARGUMENT checks, shared hand evaluation to verify a claimed win
==================  ============================================================================

Shared by every model: ``collect`` (debts → transfers under the loss cap and 逛花园 limit),
``escape``, ``bookkeeping`` (next dealer), ``breakdown``, ``without_huangfan`` (drawn hands
and escapes of the models with no 荒番). The 户/番 model of shanghai-old is the package
:mod:`.old`, the 倍 model of shanghai-baida the package :mod:`.baida`; each lists its modules.
"""

from services.scoring.domain.breakdown import CATALOG, Item, Unit, render_table
from services.scoring.domain.model import (
    BaidaResult,
    Claim,
    FeederHand,
    HandContext,
    OldResult,
    ReplacementAfter,
    Settlement,
    SettlementKind,
    Transfer,
    WinInput,
    WinKind,
    WinnerHand,
    WinnerResult,
)
from services.scoring.domain.settle import settle_draw, settle_escape, settle_win

__all__ = [
    "CATALOG",
    "BaidaResult",
    "Claim",
    "FeederHand",
    "HandContext",
    "Item",
    "OldResult",
    "ReplacementAfter",
    "Settlement",
    "SettlementKind",
    "Transfer",
    "Unit",
    "WinInput",
    "WinKind",
    "WinnerHand",
    "WinnerResult",
    "render_table",
    "settle_draw",
    "settle_escape",
    "settle_win",
]
