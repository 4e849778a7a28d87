"""``mahjong replay verify``: an exported hand checked against the rules and scoring domain
packages, in-process (:func:`services.gateway.domain.replay.verify_hand` does the work)."""

from __future__ import annotations

from typing import Any

from services.gateway.adapters.inprocess import InProcessRules, InProcessScoring
from services.gateway.domain import replay
from services.gateway.domain.ports import RulesPort, ScoringPort


def verify_hand(
    records: list[dict[str, Any]],
    *,
    rules: RulesPort | None = None,
    scoring: ScoringPort | None = None,
) -> replay.Verdict:
    """Verify an export (its JSON-lines records), by default on the in-process rules and
    scoring."""
    return replay.verify_hand(
        records, rules=rules or InProcessRules(), scoring=scoring or InProcessScoring()
    )
