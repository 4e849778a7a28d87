"""The rules domain: legality of every action, legal options per seat, wins and waits, 敲 and 漏胡
(RULES §4-7, §12-13). Pure Python on :mod:`shared.table` snapshots; no gRPC, no state.

API (import from ``services.rules.domain``)
===========================================

Hands (input checked; bad input raises :class:`shared.errors.InvalidArgument`)

* ``evaluate_hand(counts, melds, ruleset, flowers=()) -> HandEvaluation`` — a 14-tile hand: its
  allowed winning hand (``HandType`` or None; the highest applies), 八花齐, every decomposition.
* ``hand_waits(counts, melds, ruleset) -> list[int]`` — waits (听牌) of a 13-tile hand.
* ``decompositions(counts, melds=()) -> list[Decomposition]`` — every split into chows, pongs,
  kongs (melds) and a pair.

Table snapshots (:class:`shared.table.TableSnapshot`; check one with
:func:`shared.table.check_snapshot`, InvalidArgument on an impossible table)

* ``own_turn_options(snap, seat) -> OwnTurnOptions`` — discards, 敲 discards, concealed and
  added kongs, wins (self-draw / 杠开 / 八花齐 / 天胡 / 地胡). FailedPrecondition if it is not
  ``seat``'s own turn.
* ``claim_options(snap) -> tuple[ClaimOptions, ...]`` — on the last discard or added kong, the
  options of EVERY other seat in one call, in turn order from the discarder's 下家: win (敲 and
  漏胡 applied; ``missed_win`` flags a win blocked by 漏胡), pong, exposed kong, chows (下家
  only, every shape). On an added kong only 抢杠 wins are offered. ``claim_options_by_seat``:
  the same keyed by seat.
* ``validate_action(snap, seat, action)`` — None when legal, else FailedPrecondition naming why
  (``action_refusal`` returns the reason instead of raising).
* ``resolve_claims(snap, {seat: action}) -> ClaimResolution`` — all wins stand (一炮多响);
  else pong/kong over chow; ``missed_wins`` lists seats that passed a win (漏胡).

Helpers for whoever applies actions to a table

* ``after_pass(snap, seats, tile)`` / ``after_move(snap, seat)`` — add / clear 漏胡 marks.
* ``is_ready(seat_state, ruleset)`` — ready in the sense of RULES §5/§9;
  ``ready_discards(counts, melds, ruleset)`` — discards that may go with 敲.
* win situations: ``is_replacement_win`` (杠开), ``is_big_hanging`` (大吊车),
  ``is_concealed_hand`` (门清), ``is_heavenly_win`` (天胡), ``is_earthly_win`` (地胡);
  ``has_eight_flowers`` (八花齐).

Decomposition lives in :mod:`shared.hand.decomposition` (scoring needs it too).

Modules, one concept each: evaluation, readiness (敲), missed_win (漏胡),
eight_flowers (八花齐), win_situation, own_turn, claims, resolution, validation.
"""

from services.rules.domain.claims import claim_options, claim_options_by_seat, seat_claim_options
from services.rules.domain.eight_flowers import has_eight_flowers
from services.rules.domain.evaluation import HandEvaluation, evaluate_hand, hand_waits
from services.rules.domain.missed_win import after_move, after_pass, is_blocked
from services.rules.domain.own_turn import own_turn_options
from services.rules.domain.readiness import (
    declaration_required,
    is_locked,
    is_ready,
    ready_discards,
)
from services.rules.domain.resolution import resolve_claims
from services.rules.domain.validation import action_refusal, validate_action
from services.rules.domain.win_situation import (
    is_big_hanging,
    is_concealed_hand,
    is_earthly_win,
    is_heavenly_win,
    is_replacement_win,
)
from shared.hand.decomposition import (
    Decomposition,
    HandSet,
    SetKind,
    decompositions,
)

__all__ = [
    "Decomposition",
    "HandEvaluation",
    "HandSet",
    "SetKind",
    "action_refusal",
    "after_move",
    "after_pass",
    "claim_options",
    "claim_options_by_seat",
    "declaration_required",
    "decompositions",
    "evaluate_hand",
    "hand_waits",
    "has_eight_flowers",
    "is_big_hanging",
    "is_blocked",
    "is_concealed_hand",
    "is_earthly_win",
    "is_heavenly_win",
    "is_locked",
    "is_ready",
    "is_replacement_win",
    "own_turn_options",
    "ready_discards",
    "resolve_claims",
    "seat_claim_options",
    "validate_action",
]
