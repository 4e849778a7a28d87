"""The planning bot: plays to win under Shanghai rules (RULES §4-7).

It picks a plan (:mod:`.plan`: 碰碰胡, 清/混一色 or 风一色/风碰) from its tiles and re-judges it at
every decision, so it can take over any seat at any moment (bot seats, 托管, a player who left):

* own turn — win whenever it can; declare 敲 as soon as a discard leaves it waiting on live
  tiles (the discard with the most live waits); kong when the kong fits the plan and does not
  set the hand back; otherwise discard the tile whose loss leaves the best plan cheapest
  (distance, then useful tiles), away from the plan first;
* claim — win whenever it can; pong, exposed kong or chow only when the meld fits the current
  plan and brings the hand closer (a kong: not further); otherwise pass;
* 换牌 — bury the tiles the plan needs least.

Everything works on 34-count arrays; one decision costs a few hundred distance look-ups.
"""

from __future__ import annotations

from collections.abc import Sequence

from services.gateway.bots.distance import INFEASIBLE
from services.gateway.bots.plan import (
    PlanChoice,
    allowed_honors,
    choose_plan,
    feasible_plans,
    plan_cost,
    plan_distance,
    plan_family,
    useful_tiles,
)
from services.gateway.bots.view import SeatView, unseen_counts
from shared.hand.hand_type import HandType
from shared.hand.waits import waits
from shared.melds import Meld, MeldKind
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
    WinOption,
)
from shared.tiles import NUM_KINDS


class PlanningBot:
    """A deterministic bot that plays for the cheapest allowed winning hand."""

    name = "planner"
    needs_view = True

    # --- own turn --------------------------------------------------------------------------
    def own_turn(self, view: SeatView, options: OwnTurnOptions) -> Action:
        if options.wins:
            return _best_win(view, options.wins)
        if view.declared_ready or not options.discards:
            return self._locked_turn(view, options)
        unseen = unseen_counts(view)
        if options.ready_discards:
            ready = _best_ready_discard(view, options.ready_discards, unseen)
            if ready is not None:
                return DeclareReady(ready)
        discard, choice = best_discard(view.concealed, view.melds, unseen, view, options.discards)
        kong = self._fitting_kong(view, options, unseen, choice)
        return kong if kong is not None else Discard(discard)

    def _locked_turn(self, view: SeatView, options: OwnTurnOptions) -> Action:
        """After 敲 the rules offer only the kongs that keep the waits and, as discards, the
        drawn tile; should more be offered, keep the most live waits."""
        if options.concealed_kongs:
            return ConcealedKong(options.concealed_kongs[0])
        if options.added_kongs:
            return AddedKong(options.added_kongs[0])
        if len(options.discards) > 1:
            keep = _best_ready_discard(view, options.discards, unseen_counts(view))
            if keep is not None:
                return Discard(keep)
        return Discard(options.discards[-1])

    def _fitting_kong(
        self,
        view: SeatView,
        options: OwnTurnOptions,
        unseen: list[int],
        choice: PlanChoice | None,
    ) -> Action | None:
        if choice is None or not (options.concealed_kongs or options.added_kongs):
            return None
        honors = allowed_honors(view.ruleset)
        for tile in options.concealed_kongs:
            counts = list(view.concealed)
            counts[tile] -= 4
            melds = (*view.melds, Meld(MeldKind.CONCEALED_KONG, (tile,) * 4))
            if plan_distance(choice.plan, counts, melds, unseen, honors) <= choice.distance:
                return ConcealedKong(tile)
        for tile in options.added_kongs:
            counts = list(view.concealed)
            counts[tile] -= 1
            melds = tuple(
                Meld(MeldKind.ADDED_KONG, (tile,) * 4, m.from_seat)
                if m.kind is MeldKind.PONG and m.tiles[0] == tile
                else m
                for m in view.melds
            )
            if plan_distance(choice.plan, counts, melds, unseen, honors) <= choice.distance:
                return AddedKong(tile)
        return None

    # --- claims ----------------------------------------------------------------------------
    def claim(self, view: SeatView, options: ClaimOptions, tile: int) -> Action:
        """Decide on ``tile`` (the last discard, or the added-kong tile when robbing)."""
        if options.win is not None:
            return Win()
        if not (options.pong or options.exposed_kong or options.chows):
            return Pass()
        if view.declared_ready:  # only a kong that keeps the waits is ever offered now
            return ExposedKong() if options.exposed_kong else Pass()
        unseen = unseen_counts(view)
        honors = allowed_honors(view.ruleset)
        now = choose_plan(view.concealed, view.melds, unseen, view.ruleset)
        if now is None:
            return Pass()
        plan = now.plan
        best: tuple[int, int, Action] | None = None  # (distance, preference, action)

        def consider(action: Action, counts: list[int], meld: Meld, rank: int) -> None:
            nonlocal best
            melds = (*view.melds, meld)
            d = _best_distance_after(plan, counts, melds, unseen, honors)
            if d >= INFEASIBLE:
                return
            good = d <= now.distance if isinstance(action, ExposedKong) else d < now.distance
            if good and (best is None or (d, rank) < best[:2]):
                best = (d, rank, action)

        if options.exposed_kong:
            counts = list(view.concealed)
            counts[tile] -= 3
            consider(ExposedKong(), counts, Meld(MeldKind.EXPOSED_KONG, (tile,) * 4), 0)
        if options.pong:
            counts = list(view.concealed)
            counts[tile] -= 2
            consider(Pong(), counts, Meld(MeldKind.PONG, (tile,) * 3), 1)
        for low in options.chows:
            counts = list(view.concealed)
            for k in (low, low + 1, low + 2):
                if k != tile:
                    counts[k] -= 1
            consider(Chow(low), counts, Meld(MeldKind.CHOW, (low, low + 1, low + 2)), 2)
        return best[2] if best is not None else Pass()

    # --- 换牌 ------------------------------------------------------------------------------
    def tile_swap(self, view: SeatView, count: int) -> tuple[int, ...]:
        """The ``count`` tiles to bury: one at a time, the tile whose loss hurts the plan least."""
        unseen = unseen_counts(view)
        honors = allowed_honors(view.ruleset)
        counts = list(view.concealed)
        now = choose_plan(counts, view.melds, unseen, view.ruleset)
        buried: list[int] = []
        for _ in range(count):
            best_kind, best_d = -1, INFEASIBLE + 1
            for k in range(34):
                if not counts[k]:
                    continue
                counts[k] -= 1
                d = (
                    plan_distance(now.plan, counts, view.melds, unseen, honors)
                    if now
                    else -counts[k]
                )
                counts[k] += 1
                if d < best_d:
                    best_kind, best_d = k, d
            if best_kind < 0:
                break
            counts[best_kind] -= 1
            buried.append(best_kind)
        return tuple(buried)


def best_discard(
    concealed: Sequence[int],
    melds: Sequence[Meld],
    unseen: Sequence[int],
    view: SeatView,
    allowed: Sequence[int],
) -> tuple[int, PlanChoice | None]:
    """The discard (among ``allowed``) that leaves the cheapest plan, and that plan.

    Two stages keep it fast: distances of every (plan, discard) pair first, then useful tiles
    only for the discards at each plan's best distance. Ties go to the tile most already seen
    (a safer discard), then to the higher kind.
    """
    honors = allowed_honors(view.ruleset)
    counts = list(concealed)
    # a 百搭 (1j, or a tile of the flipped wild kind) is kept (plan.py)
    kinds = sorted(k for k in set(allowed) if k < NUM_KINDS and k != view.wild_kind)
    if not kinds:
        return allowed[0], None
    plans = feasible_plans(melds, counts, honors, plan_family(view.ruleset))
    unseen_total = sum(unseen)
    best: tuple[float, int, int] | None = None
    best_choice: PlanChoice | None = None
    for plan in plans:
        dists = {}
        for k in kinds:
            counts[k] -= 1
            dists[k] = plan_distance(plan, counts, melds, unseen, honors)
            counts[k] += 1
        low = min(dists.values())
        if low >= INFEASIBLE:
            continue
        for k in kinds:
            if dists[k] != low:
                continue
            counts[k] -= 1
            u = useful_tiles(plan, counts, melds, unseen, honors, low)
            counts[k] += 1
            cost = plan_cost(plan, low, u, unseen_total)
            key = (cost, -(4 - unseen[k] - concealed[k]), -k)
            if best is None or key < best:
                best = key
                best_choice = PlanChoice(plan, low, u, cost)
    if best is None:  # no plan reachable: throw the tile seen most often
        k = max(kinds, key=lambda t: (4 - unseen[t] - concealed[t], t))
        return k, None
    return -best[2], best_choice


def _best_distance_after(plan, counts, melds, unseen, honors) -> int:
    """Distance under ``plan`` after a claim: a ``3n + 2`` hand still discards its best tile."""
    if sum(counts) % 3 != 2:
        return plan_distance(plan, counts, melds, unseen, honors)
    best = INFEASIBLE
    for k in range(34):
        if counts[k]:
            counts[k] -= 1
            d = plan_distance(plan, counts, melds, unseen, honors)
            counts[k] += 1
            if d < best:
                best = d
    return best


def _best_ready_discard(
    view: SeatView, candidates: Sequence[int], unseen: Sequence[int]
) -> int | None:
    """The 敲 discard leaving the most live winning tiles; None when every wait is dead."""
    best, best_live = None, 0
    counts = list(view.concealed)
    for d in sorted(set(candidates)):
        counts[d] -= 1
        live = sum(unseen[k] for k in waits(counts, view.melds, view.ruleset))
        counts[d] += 1
        if live > best_live:
            best, best_live = d, live
    return best


def _win_value(ruleset, option: WinOption) -> float:
    lezi = getattr(ruleset.hands, option.hand.label, 0) or 0
    return float(lezi) if lezi else 0.5


def _best_win(view: SeatView, wins: Sequence[WinOption]) -> Win:
    best = max(wins, key=lambda w: _win_value(view.ruleset, w))
    return Win(eight_flowers=best.hand is HandType.EIGHT_FLOWERS)


def plan_of(view: SeatView) -> PlanChoice | None:
    """The plan the bot would follow from this view (the terminal client's hint shows it)."""
    return choose_plan(view.concealed, view.melds, unseen_counts(view), view.ruleset)


def plan_summary(view: SeatView) -> str:
    """``plan 清/混一色万, 2 from waiting, 12 useful tiles unseen`` (or ``清/混一色万: complete``):
    the plan of :func:`plan_of` for people ("" when there is none). The terminal client shows
    it beside the hand; GetHint returns it."""
    choice = plan_of(view)
    if choice is None:
        return ""
    if choice.distance < 0:
        return f"{choice.plan.name_zh}: complete"
    steps = "waiting" if choice.distance == 0 else f"{choice.distance} from waiting"
    return f"plan {choice.plan.name_zh}, {steps}, {choice.useful} useful tiles unseen"
