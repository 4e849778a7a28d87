"""The scoring models and which one a ruleset uses (``table.scoring_model``).

=========  ==========================================================================
``qiaoma`` 花 and 勒子, 门清/开宝/荒番, 承包, loss cap (RULES §8-§10): :mod:`.qiaoma`
``old``    户 × 2^番, 出冲/包冲, 九张落地包输 (RULES-presets §13.A): :mod:`.old`
``baida``  (底分 + 花) × 倍, self-draw only (RULES-presets §13.B): :mod:`.baida`
=========  ==========================================================================

Each model settles a win, a drawn hand and an escape on its own; the entry points of
:mod:`.settle` only look the model up here, so no model's rules run inside another's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from services.scoring.domain import qiaoma
from services.scoring.domain.baida import settle as baida
from services.scoring.domain.model import HandContext, Settlement, WinInput
from services.scoring.domain.old import settle as old
from shared.errors import InvalidArgument
from shared.ruleset import Ruleset


@dataclass(frozen=True, slots=True)
class ScoringModel:
    name: str
    settle_win: Callable[[WinInput], Settlement]
    settle_draw: Callable[[HandContext], Settlement]
    settle_escape: Callable[[HandContext, object], Settlement]  # the seat, checked there


MODELS = {
    m.name: m
    for m in (
        ScoringModel("qiaoma", qiaoma.settle_win, qiaoma.settle_draw, qiaoma.settle_escape),
        ScoringModel("old", old.settle_win, old.settle_draw, old.settle_escape),
        ScoringModel("baida", baida.settle_win, baida.settle_draw, baida.settle_escape),
    )
}


def model_of(ruleset: Ruleset) -> ScoringModel:
    """The model ``ruleset`` scores with (the loader has checked the option's value)."""
    name = ruleset.table.scoring_model
    try:
        return MODELS[name]
    except KeyError:
        raise InvalidArgument(
            f"ruleset {ruleset.name}: unknown scoring model {name!r}; known: " + ", ".join(MODELS),
            field="ruleset",
        ) from None
