"""Plans of the planning bot: which allowed winning hand to aim at (RULES §6).

The plain mixed hand never wins in Shanghai Mahjong, so a bot must aim at a hand type from the
start:

* ``PONGS`` 碰碰胡 — pongs and a pair, suits may mix (混碰/清碰 when it also is a flush);
* ``FLUSH`` 清一色 / 混一色 in one suit (``suit`` 0 万, 1 筒, 2 条), honors allowed;
* ``HONORS`` 风一色 / 风碰 — honors only, in any arrangement (乱风向);

and under shanghai-old and shanghai-baida, where any standard shape wins (RULES-presets §13.A.4,
§13.B.5), ``STANDARD`` 平胡 (chows of any suit), ``PONGS`` and ``FLUSH`` (worth more) and
``PAIRS`` 七对; 乱风向 is no win there (:func:`plan_family`). A 百搭 fills any gap of any plan,
so every plan's distance drops alike by the 百搭 held: the plans are judged on the natural
tiles, and the planner keeps its 百搭 (never discards one while it has another choice).

A plan is judged on a 13-tile hand by its distance (:mod:`.distance`) and its useful tiles (the
unseen copies that bring it closer); :func:`plan_cost` turns both into the expected number of
draws to a waiting hand, minus a bonus for the plan's value, and the cheapest plan wins.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from services.gateway.bots.distance import (
    HONOR_KINDS,
    INFEASIBLE,
    WIND_KINDS,
    flush_distance,
    honors_distance,
    pairs_distance,
    pongs_distance,
    standard_distance,
)
from shared.melds import Meld
from shared.ruleset import Ruleset


class PlanKind(enum.IntEnum):
    PONGS = 1  # 碰碰胡
    FLUSH = 2  # 清一色 / 混一色
    HONORS = 3  # 风一色 / 风碰
    STANDARD = 4  # 平胡: any standard shape (shanghai-old, shanghai-baida)
    PAIRS = 5  # 七对 (shanghai-old, shanghai-baida)


@dataclass(frozen=True, slots=True)
class Plan:
    kind: PlanKind
    suit: int = -1  # for FLUSH: 0 万, 1 筒, 2 条

    @property
    def label(self) -> str:
        if self.kind is PlanKind.FLUSH:
            return f"flush-{'mps'[self.suit]}"
        return self.kind.name.lower()

    @property
    def name_zh(self) -> str:
        if self.kind is PlanKind.FLUSH:
            return "清/混一色" + "万筒条"[self.suit]
        return _NAMES_ZH[self.kind]


_NAMES_ZH = {
    PlanKind.PONGS: "碰碰胡",
    PlanKind.HONORS: "风一色",
    PlanKind.STANDARD: "平胡",
    PlanKind.PAIRS: "七对",
}
PONGS = Plan(PlanKind.PONGS)
HONORS = Plan(PlanKind.HONORS)
STANDARD = Plan(PlanKind.STANDARD)
PAIRS = Plan(PlanKind.PAIRS)
FLUSHES = tuple(Plan(PlanKind.FLUSH, s) for s in range(3))
ALL_PLANS = (PONGS, *FLUSHES, HONORS)
PRESET_PLANS = (STANDARD, PONGS, *FLUSHES, PAIRS)  # any standard shape wins

# Value bonus in expected draws: a 风一色 is worth 2 勒子, a flush often 1, 碰碰胡 is flower-scored;
# under old/baida 碰碰胡 and 七对 double, a flush is worth 4 番 / ×4.
_BONUS = {
    PlanKind.PONGS: 0.0,
    PlanKind.FLUSH: 1.0,
    PlanKind.HONORS: 3.0,
    PlanKind.STANDARD: -1.0,
    PlanKind.PAIRS: 0.0,
}


def plan_family(ruleset: Ruleset) -> tuple[Plan, ...]:
    """The plans worth playing for under the ruleset: RULES §6's special hands, or under the
    户/番 and 百搭 models any standard shape, its better forms and 七对."""
    model = ruleset.sections["table"].get("scoring_model", "qiaoma")
    return ALL_PLANS if model == "qiaoma" else PRESET_PLANS


def allowed_honors(ruleset: Ruleset) -> tuple[int, ...]:
    """Honors that count as 风 for flushes and all-honor hands (option honors_include_dragons)."""
    return HONOR_KINDS if ruleset.hands.honors_include_dragons else WIND_KINDS


def plan_distance(
    plan: Plan,
    counts: Sequence[int],
    melds: Sequence[Meld],
    unseen: Sequence[int],
    honors: Sequence[int] = HONOR_KINDS,
) -> int:
    """The plan's distance (向听) of concealed ``counts`` with own ``melds``."""
    if plan.kind is PlanKind.PONGS:
        return pongs_distance(counts, melds, unseen)
    if plan.kind is PlanKind.FLUSH:
        return flush_distance(counts, melds, plan.suit, honors)
    if plan.kind is PlanKind.STANDARD:
        return standard_distance(counts, melds)
    if plan.kind is PlanKind.PAIRS:
        return pairs_distance(counts, melds)
    return honors_distance(counts, melds, honors)


def candidate_draws(plan: Plan, counts: Sequence[int], honors: Sequence[int]) -> list[int]:
    """Kinds that could bring the hand closer under ``plan`` (a superset of the useful ones)."""
    if plan.kind in (PlanKind.PONGS, PlanKind.PAIRS):
        return [k for k in range(34) if 0 < counts[k] < 3]
    if plan.kind is PlanKind.HONORS:
        return list(honors)
    if plan.kind is PlanKind.STANDARD:
        near = {k for k in range(27, 34) if 0 < counts[k] < 3}
        for k in range(27):
            if counts[k]:
                near.update(x for x in range(k - 2, k + 3) if x // 9 == k // 9)
        return sorted(near)
    base = 9 * plan.suit
    marks = [False] * 9
    held = False
    for r in range(9):
        if counts[base + r]:
            held = True
            for d in range(max(0, r - 2), min(8, r + 2) + 1):
                marks[d] = True
    out = [base + r for r in range(9) if marks[r] or not held]
    out.extend(k for k in honors if 0 < counts[k] < 3)
    return out


def useful_tiles(
    plan: Plan,
    counts: Sequence[int],
    melds: Sequence[Meld],
    unseen: Sequence[int],
    honors: Sequence[int],
    distance: int | None = None,
) -> int:
    """有效牌: unseen copies of the kinds whose draw lowers the plan's distance of a 13-tile
    (``3n + 1``) hand."""
    if distance is None:
        distance = plan_distance(plan, counts, melds, unseen, honors)
    trial = list(counts)
    total = 0
    for k in candidate_draws(plan, counts, honors):
        if not unseen[k]:
            continue
        trial[k] += 1
        if plan_distance(plan, trial, melds, unseen, honors) < distance:
            total += unseen[k]
        trial[k] -= 1
    return total


STEP_DRAWS = 6.0  # rough draws (and claims) per step closer, after the first


def plan_cost(plan: Plan, distance: int, useful: int, unseen_total: int) -> float:
    """Rough draws until the hand waits (or wins, from a waiting hand), less the plan's value
    bonus; lower is better. The next step costs ``unseen / useful`` draws (at most
    :data:`STEP_DRAWS`), every further step :data:`STEP_DRAWS`, so a closer hand always wins
    unless the farther plan is worth more."""
    if distance >= INFEASIBLE:
        return float("inf")
    if distance < 0:
        return -100.0
    first = unseen_total / useful if useful else STEP_DRAWS
    return STEP_DRAWS * distance + min(first, STEP_DRAWS) - _BONUS[plan.kind]


def feasible_plans(
    melds: Sequence[Meld],
    counts: Sequence[int],
    honors: Sequence[int],
    family: Sequence[Plan] = ALL_PLANS,
) -> list:
    """Plans still reachable with these melds and worth evaluating for these tiles."""
    if family is PRESET_PLANS:
        return _feasible_preset_plans(melds, counts, honors)
    plans = _pongs_and_flushes(melds, counts, honors, 6)
    honor_tiles = sum(counts[k] for k in honors)
    if honors_distance(counts, melds, honors) < INFEASIBLE and (honor_tiles + 3 * len(melds) >= 6):
        plans.append(HONORS)
    if not plans:  # keep something to play for, even if far away
        plans.extend(p for p in ALL_PLANS if plan_distance(p, counts, melds, counts, honors) < 99)
    return plans


def _pongs_and_flushes(
    melds: Sequence[Meld], counts: Sequence[int], honors: Sequence[int], min_tiles: int
) -> list:
    """碰碰胡 if reachable, and each flush reachable with at least ``min_tiles`` tiles (melds
    included) of its suit and the honors."""
    plans = [PONGS] if pongs_distance(counts, melds) < INFEASIBLE else []
    honor_tiles = sum(counts[k] for k in honors)
    for p in FLUSHES:
        in_suit = sum(counts[9 * p.suit : 9 * p.suit + 9]) + honor_tiles
        if flush_distance(counts, melds, p.suit, honors) < INFEASIBLE and (
            in_suit + 3 * len(melds) >= min_tiles
        ):
            plans.append(p)
    return plans


def _feasible_preset_plans(
    melds: Sequence[Meld], counts: Sequence[int], honors: Sequence[int]
) -> list:
    plans = [STANDARD, *_pongs_and_flushes(melds, counts, honors, 8)]
    if not melds and sum(1 for n in counts if n >= 2) >= 4:
        plans.append(PAIRS)
    return plans


@dataclass(frozen=True, slots=True)
class PlanChoice:
    plan: Plan
    distance: int
    useful: int
    cost: float


def evaluate_hand(
    counts: Sequence[int],
    melds: Sequence[Meld],
    unseen: Sequence[int],
    honors: Sequence[int],
    plans: Sequence[Plan] | None = None,
    family: Sequence[Plan] = ALL_PLANS,
) -> PlanChoice | None:
    """The best plan for a 13-tile (``3n + 1``) hand, or None if no plan is reachable."""
    unseen_total = sum(unseen)
    best: PlanChoice | None = None
    for plan in plans if plans is not None else feasible_plans(melds, counts, honors, family):
        d = plan_distance(plan, counts, melds, unseen, honors)
        if d >= INFEASIBLE:
            continue
        u = useful_tiles(plan, counts, melds, unseen, honors, d)
        cost = plan_cost(plan, d, u, unseen_total)
        if best is None or cost < best.cost:
            best = PlanChoice(plan, d, u, cost)
    return best


def choose_plan(
    counts: Sequence[int], melds: Sequence[Meld], unseen: Sequence[int], ruleset: Ruleset
) -> PlanChoice | None:
    """The plan to play for with these concealed tiles and melds.

    A 13-tile hand is judged as it stands; a 14-tile hand (own turn, before the discard) by its
    best discard under each plan.
    """
    honors = allowed_honors(ruleset)
    family = plan_family(ruleset)
    if sum(counts) % 3 == 1:
        return evaluate_hand(counts, melds, unseen, honors, family=family)
    best: PlanChoice | None = None
    trial = list(counts)
    for k in range(34):
        if not counts[k]:
            continue
        trial[k] -= 1
        choice = evaluate_hand(trial, melds, unseen, honors, family=family)
        trial[k] += 1
        if choice and (best is None or choice.cost < best.cost):
            best = choice
    return best
