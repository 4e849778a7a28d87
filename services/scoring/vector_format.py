"""The scoring vector format (tests/vectors/README.md) in and out of the domain.

One JSON object per hand: ``ruleset`` (preset name; optional ``options`` overrides as
``{"section.option": value}``), ``kind`` (``win`` default, ``draw``, ``escape``), ``stake``,
``dealer``, ``dice``, ``huangfan``, ``winners`` (``seat``, ``concealed``, ``melds``,
``flowers``, ``win_tile``), ``win``, ``from``, ``replacement``, ``ready``, ``claims`` (pairs
``[claimer, claimed_from]``, optionally a third element true when the claimed-from player had
declared 敲), ``first_go_around`` (天胡/地胡), ``garden_stacks`` (逛花园), ``doubled_seats``
(seats that played a 加倍卡, RULES-items §2), and for an escape ``seat``; RULES-presets §13.0
adds ``last_tile`` (海底捞月), ``replacement_after`` (``kong`` or ``flower``), ``from_hand``
(``{concealed, melds}`` of the discarder, shanghai-old's 包输) and
``wild_indicator`` (the turned-up tile of a flipped-百搭 table), and ``visible`` (mpsz: the
tiles the winner sees outside the hand, read with ``baida_tiles.wildcard_fifth_copy`` false).
``expect`` is ignored. The
result is printed with the keys of ``expect``: ``winners`` (per winner ``seat``, ``hand``,
``flowers``, ``value`` under the 敲麻 model; ``seat``, ``hand``, ``hu``, ``fan``,
``fan_items``, ``value`` under the 户/番 model; ``seat``, ``hand``, ``flowers``,
``multiplier``, ``value`` under the 倍 model), ``payments`` and ``house``, plus ``breakdown``
(the items as JSON).

Malformed input raises :class:`shared.errors.InvalidArgument` naming the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from services.scoring.domain import (
    Claim,
    FeederHand,
    HandContext,
    ReplacementAfter,
    Settlement,
    SettlementKind,
    WinInput,
    WinKind,
    WinnerHand,
    WinnerResult,
    settle_draw,
    settle_escape,
    settle_win,
)
from shared import tiles as T
from shared.errors import InvalidArgument
from shared.melds import Meld, MeldError
from shared.ruleset import RulesetError, resolve_ruleset


def _tiles(text: Any, key: str) -> tuple[int, ...]:
    if not isinstance(text, str):
        raise InvalidArgument(f"{key} must be mpsz text, got {text!r}", field=key)
    try:
        return tuple(T.parse(text))
    except T.NotationError as exc:
        raise InvalidArgument(f"{key}: {exc}", field=key) from None


def _one_tile(text: Any, key: str) -> int:
    tiles = _tiles(text, key)
    if len(tiles) != 1:
        raise InvalidArgument(f"{key} must be one tile, got {text!r}", field=key)
    return tiles[0]


def _require(obj: Mapping, key: str, where: str = "") -> Any:
    if key not in obj:
        raise InvalidArgument(f"{where}{key} is missing", field=key)
    return obj[key]


def _context(obj: Mapping) -> HandContext:
    options = obj.get("options") or {}
    if not isinstance(options, Mapping):
        raise InvalidArgument("options must be an object of section.option: value", field="options")
    name = obj.get("ruleset") or ""
    if not isinstance(name, str):
        raise InvalidArgument(f"ruleset must be a preset name, got {name!r}", field="ruleset")
    try:
        ruleset = resolve_ruleset(name, options)
    except RulesetError as exc:
        raise InvalidArgument(f"ruleset: {exc}", field="ruleset") from None
    dice = obj.get("dice")
    if dice is not None:
        if not isinstance(dice, list | tuple):
            raise InvalidArgument(f"dice must be a list of two dice, got {dice!r}", field="dice")
        dice = tuple(dice)
    stacks = obj.get("garden_stacks")
    return HandContext(
        ruleset=ruleset,
        stake=_require(obj, "stake"),
        dealer=obj.get("dealer", 0),
        dice=dice,
        huangfan=obj.get("huangfan", 0),
        garden_stacks=None if stacks is None else tuple(_list(stacks, "garden_stacks")),
        doubled_seats=frozenset(_seats(obj.get("doubled_seats", []), "doubled_seats")),
    )


def _melds(raw: Any, key: str) -> tuple[Meld, ...]:
    melds = []
    for j, m in enumerate(_list(raw or [], key)):
        try:
            melds.append(Meld.from_json(m))
        except (MeldError, ValueError, KeyError, TypeError, T.NotationError) as exc:
            raise InvalidArgument(f"{key}[{j}]: {exc}", field=key) from None
    return tuple(melds)


def _winner(d: Any, i: int) -> WinnerHand:
    where = f"winners[{i}]."
    if not isinstance(d, Mapping):
        raise InvalidArgument(f"winners[{i}] must be an object", field="winners")
    return WinnerHand(
        seat=_require(d, "seat", where),
        concealed=_tiles(d.get("concealed", ""), f"{where}concealed"),
        melds=_melds(d.get("melds"), f"{where}melds"),
        flowers=_tiles(d.get("flowers", ""), f"{where}flowers"),
        win_tile=_one_tile(_require(d, "win_tile", where), f"{where}win_tile"),
    )


def _list(raw: Any, key: str) -> list:
    if not isinstance(raw, list | tuple):
        raise InvalidArgument(f"{key} must be a list, got {raw!r}", field=key)
    return list(raw)


def _seats(raw: Any, key: str) -> list[int]:
    seats = _list(raw, key)
    for s in seats:
        if not isinstance(s, int) or isinstance(s, bool):
            raise InvalidArgument(f"{key}: {s!r} is not a seat number 0-3", field=key)
    return seats


def _claims(raw: Any) -> tuple[Claim, ...] | None:
    if raw is None:
        return None
    out = []
    for i, c in enumerate(_list(raw, "claims")):
        if not isinstance(c, list | tuple) or len(c) not in (2, 3):
            raise InvalidArgument(
                f"claims[{i}] must be [claimer, claimed_from(, feeder_ready)], got {c!r}",
                field="claims",
            )
        out.append(Claim(c[0], c[1], bool(c[2]) if len(c) == 3 else False))
    return tuple(out)


def _feeder_hand(raw: Any) -> FeederHand | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise InvalidArgument("from_hand must be an object {concealed, melds}", field="from_hand")
    return FeederHand(
        concealed=_tiles(raw.get("concealed", ""), "from_hand.concealed"),
        melds=_melds(raw.get("melds"), "from_hand.melds"),
    )


def _replacement_after(raw: Any) -> ReplacementAfter:
    try:
        return ReplacementAfter(raw)
    except ValueError:
        raise InvalidArgument(
            f"replacement_after {raw!r}: expected kong or flower", field="replacement_after"
        ) from None


def win_input(obj: Mapping) -> WinInput:
    """A ``kind: win`` object as a :class:`WinInput`."""
    label = _require(obj, "win")
    try:
        win = WinKind(label)
    except ValueError:
        raise InvalidArgument(
            f"unknown win {label!r}; expected one of {', '.join(k.value for k in WinKind)}",
            field="win",
        ) from None
    winners = _list(_require(obj, "winners"), "winners")
    return WinInput(
        context=_context(obj),
        winners=tuple(_winner(d, i) for i, d in enumerate(winners)),
        win=win,
        from_seat=obj.get("from"),
        replacement=bool(obj.get("replacement", False)),
        ready=frozenset(_seats(obj.get("ready") or [], "ready")),
        claims=_claims(obj.get("claims")),
        first_go_around=bool(obj.get("first_go_around", False)),
        last_tile=bool(obj.get("last_tile", False)),
        replacement_after=_replacement_after(obj.get("replacement_after", "kong")),
        feeder_hand=_feeder_hand(obj.get("from_hand")),
        wild_indicator=(
            None
            if obj.get("wild_indicator") is None
            else _one_tile(obj["wild_indicator"], "wild_indicator")
        ),
        visible=tuple(_tiles(obj.get("visible", ""), "visible")),
    )


def settle_object(obj: Any) -> Settlement:
    """Settle one vector-format object."""
    if not isinstance(obj, Mapping):
        raise InvalidArgument("each line must be a JSON object")
    kind = obj.get("kind", "win")
    if kind == "win":
        return settle_win(win_input(obj))
    if kind == "draw":
        return settle_draw(_context(obj))
    if kind == "escape":
        return settle_escape(_context(obj), _require(obj, "seat"))
    raise InvalidArgument(f"unknown kind {kind!r}; expected win, draw or escape", field="kind")


def settlement_json(s: Settlement, *, breakdown: bool = True) -> dict:
    """The printed result: the keys of ``expect`` plus ``breakdown``."""
    out: dict = {}
    if s.kind is SettlementKind.WIN:
        out["winners"] = [winner_json(r) for r in s.winners]
    out["payments"] = list(s.payments)
    out["house"] = s.house
    if breakdown:
        out["breakdown"] = [it.to_json() for it in s.breakdown]
    return out


def winner_json(r: WinnerResult) -> dict:
    """One winner with the keys of its model's ``expect.winners[]``."""
    if r.old is not None:
        return {
            "seat": r.seat,
            "hand": r.hand.label,
            "hu": r.old.hu,
            "fan": r.old.fan,
            "fan_items": list(r.old.fan_items),
            "value": r.value,
        }
    if r.baida is not None:
        return {
            "seat": r.seat,
            "hand": r.hand.label,
            "flowers": r.flowers,
            "multiplier": r.baida.multiplier,
            "value": r.value,
        }
    return {"seat": r.seat, "hand": r.hand.label, "flowers": r.flowers, "value": r.value}
