"""The random legal-move bot: for tests, fuzzing and the engine benchmark.

Every decision picks uniformly among the legal actions the rules offered (:func:`legal_actions`),
from its own seeded generator, so a run is reproducible.
"""

from __future__ import annotations

import random

from services.gateway.bots.view import SeatView
from shared.hand.hand_type import HandType
from shared.table import (
    Action,
    AddedKong,
    Chow,
    ClaimOptions,
    ConcealedKong,
    DeclareReady,
    Discard,
    ExposedKong,
    OwnTurnOptions,
    Pass,
    Pong,
    Win,
)


def legal_actions(options: OwnTurnOptions | ClaimOptions) -> list[Action]:
    """Every distinct action the options allow, own turn or claim."""
    if isinstance(options, OwnTurnOptions):
        acts: list[Action] = [Discard(t) for t in dict.fromkeys(options.discards)]
        acts += [DeclareReady(t) for t in dict.fromkeys(options.ready_discards)]
        acts += [ConcealedKong(t) for t in options.concealed_kongs]
        acts += [AddedKong(t) for t in options.added_kongs]
        eights = dict.fromkeys(w.hand is HandType.EIGHT_FLOWERS for w in options.wins)
        acts += [Win(eight_flowers=e) for e in eights]
        return acts
    acts = [Pass()]
    if options.win is not None:
        acts.append(Win())
    if options.pong:
        acts.append(Pong())
    if options.exposed_kong:
        acts.append(ExposedKong())
    acts += [Chow(low) for low in options.chows]
    return acts


class RandomBot:
    """Uniformly random among the legal actions; ``seed`` makes it reproducible."""

    name = "random"
    needs_view = False  # decides from the options alone

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)
        self.random = self.rng.random

    def own_turn(self, view: SeatView | None, options: OwnTurnOptions) -> Action:
        """Uniform over :func:`legal_actions` without building the list (the engine benchmark
        asks this about a hundred times a hand): pick an index, then find its group."""
        o = options
        if o.wins:
            return self.rng.choice(legal_actions(o))
        n = len(o.discards) + len(o.ready_discards) + len(o.concealed_kongs) + len(o.added_kongs)
        i = int(self.random() * n)  # uniform over the n actions, one C call
        if i < len(o.discards):
            return Discard(o.discards[i])
        i -= len(o.discards)
        if i < len(o.ready_discards):
            return DeclareReady(o.ready_discards[i])
        i -= len(o.ready_discards)
        if i < len(o.concealed_kongs):
            return ConcealedKong(o.concealed_kongs[i])
        return AddedKong(o.added_kongs[i - len(o.concealed_kongs)])

    def claim(self, view: SeatView | None, options: ClaimOptions, tile: int) -> Action:
        return self.rng.choice(legal_actions(options))

    def tile_swap(self, view: SeatView, count: int) -> tuple[int, ...]:
        tiles = [k for k, n in enumerate(view.concealed) for _ in range(n)]
        return tuple(sorted(self.rng.sample(tiles, min(count, len(tiles)))))
